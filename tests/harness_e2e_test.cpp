// The built `locklab` binary end to end, against real redis-server processes
// it starts itself: the lessons it must show, its exit codes, its bad-input
// behaviour. Runs are small (a few hundred operations) to keep the suite fast.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/run_documents.h"
#include "run/run_document.h"

namespace locklab::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::run_locklab;
using testing::slurp;

class LocklabBinary : public testing::RunDocumentsTest {
 protected:
  LocklabBinary() : RunDocumentsTest("locklab-e2e") {}

  static void expect_one_line(const std::string& err) {
    ASSERT_FALSE(err.empty());
    EXPECT_EQ(err.find('\n'), err.size() - 1) << "exactly one line on stderr: " << err;
    EXPECT_EQ(err.rfind("locklab: ", 0), 0u) << err;
  }

};

TEST_F(LocklabBinary, NoLockLosesUpdatesAcrossProcesses) {
  // hold 2 ms: four read-modify-write windows overlap, so updates are lost every run.
  const auto run = run_locklab("run --lock no-lock --clients 4 --ops 200 --hold 2 --json " + path("no-lock.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = result("no-lock.json");
  EXPECT_EQ(r["verdict"], "violation");
  EXPECT_GT(r["safety"]["lost_updates"].get<long long>(), 0);
  EXPECT_GT(r["safety"]["overlaps"].get<long long>(), 0);
  EXPECT_GE(r["safety"]["max_concurrent_holders"].get<int>(), 2);
  EXPECT_EQ(r["counter"]["expected"].get<long long>(), 200);
  EXPECT_EQ(r["counter"]["expected"].get<long long>() - r["counter"]["actual"].get<long long>(),
            r["safety"]["lost_updates"].get<long long>());
  EXPECT_EQ(r["config"]["mode"], "process");
}

TEST_F(LocklabBinary, LuaSafeDeleteIsSafeWithHoldBelowTtl) {
  const auto run = run_locklab("run --lock lua-safe-delete --clients 4 --ops 200 --hold 1 --ttl 2000 --expect-safe "
                               "--json " + path("g4.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json r = result("g4.json");
  EXPECT_EQ(r["verdict"], "safe") << r["verdict_reasons"];
  EXPECT_EQ(r["safety"]["overlaps"], 0);
  EXPECT_EQ(r["safety"]["lost_updates"], 0);
  EXPECT_EQ(r["safety"]["wrong_owner_releases"], 0);
  EXPECT_EQ(r["safety"]["max_concurrent_holders"], 1);
  EXPECT_EQ(r["safety"]["keys_left"], 0);
  EXPECT_EQ(r["counter"]["actual"], r["totals"]["acquired"]) << "every critical section counted exactly once";
  EXPECT_EQ(r["counter"]["expected"], r["counter"]["actual"]);
  EXPECT_EQ(r["totals"]["attempts"], 200);
  // Each acquisition costs at least: SET NX, GET + SET counter, release script.
  EXPECT_GE(r["cost"]["round_trips_per_acquisition"].get<double>(), 4.0);
  EXPECT_GE(r["cost"]["server_commands_per_acquisition"].get<double>(), 2.0) << "SET NX + EVALSHA's GET/DEL";
  EXPECT_EQ(r["fairness"]["per_client_acquired"].size(), 4u);
  EXPECT_NE(r["config"]["command"].get<std::string>().find("run --lock lua-safe-delete --clients 4"), std::string::npos)
      << "the document says how to make it again";
}

TEST_F(LocklabBinary, ThreadModeMeasuresToo) {
  const auto run = run_locklab("run --lock lua-safe-delete --mode thread --clients 3 --ops 90 --hold 0 --json " +
                               path("threads.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = result("threads.json");
  EXPECT_EQ(r["verdict"], "safe") << r["verdict_reasons"];
  EXPECT_GT(r["cost"]["round_trips_per_acquisition"].get<double>(), 0.0) << "process-wide traffic counted once";
}

TEST_F(LocklabBinary, ExpectSafeTurnsAViolationIntoExit3) {
  const auto run =
      run_locklab("run --lock local-mutex --clients 3 --ops 60 --hold 2 --expect-safe --json " + path("m.json"));
  EXPECT_EQ(run.exit_code, 3) << "a mutex in each process excludes nothing across processes: " << run.err;
  EXPECT_EQ(result("m.json")["verdict"], "violation") << "the result is still written";
}

TEST_F(LocklabBinary, HolderCrashWithoutTtlIsADeadlock) {
  // The first holder dies (SIGKILL) right after acquiring; setnx has no
  // TTL, so everyone else waits forever for a key that never expires.
  const auto run = run_locklab("run --lock setnx --clients 2 --duration 1.2 --wait 200 --stall 400 "
                               "--fault holder-crash --json " + path("dead.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = result("dead.json");
  EXPECT_EQ(r["verdict"], "deadlock") << r["verdict_reasons"];
  EXPECT_GE(r["safety"]["stalls"].get<int>(), 1);
  EXPECT_EQ(r["safety"]["keys_left_without_ttl"], 1);
  EXPECT_EQ(r["totals"]["crashed_clients"], 1);
  EXPECT_GT(r["totals"]["timeouts"].get<int>(), 0);
}

TEST_F(LocklabBinary, CrashedHolderWithTtlCostsOnlyLiveness) {
  // Same crash, but the key has a TTL: the others wait about one TTL, then go on.
  const auto run = run_locklab("run --lock lua-safe-delete --clients 2 --duration 1.5 --ttl 300 --wait 1000 "
                               "--fault holder-crash --json " + path("ttl.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = result("ttl.json");
  EXPECT_EQ(r["verdict"], "safe") << r["verdict_reasons"];
  EXPECT_EQ(r["totals"]["crashed_clients"], 1);
  EXPECT_EQ(r["safety"]["max_concurrent_holders"], 1) << "a dead client holds nothing";
  EXPECT_GE(r["fairness"]["max_wait_us"].get<long long>(), 200'000) << "someone waited for the TTL to run out";
  const auto& acquired = r["fairness"]["per_client_acquired"];
  EXPECT_EQ(std::min(acquired[0].get<long long>(), acquired[1].get<long long>()), 1)
      << "the crashed client died in its first section: " << acquired;
}

// A client that dies after its write but before it leaves its section
// (locklab:cs-exit) keeps its section on record: hold 150 ms > ttl 50 ms, so
// the other client got in meanwhile, and that overlap (with the update it
// lost) is a violation. Before sections were recorded on entry this run
// said "safe" with max_concurrent_holders 2.
TEST_F(LocklabBinary, HolderDyingAfterItsWriteStillShowsItsOverlap) {
  const auto run = run_locklab("run --lock lua-safe-delete --clients 2 --hold 150 --ttl 50 --duration 2 "
                               "--step locklab:cs-exit:crash:0 --json " + path("crash.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = result("crash.json");
  EXPECT_EQ(r["verdict"], "violation") << r["verdict_reasons"];
  EXPECT_EQ(r["totals"]["crashed_clients"], 1);
  EXPECT_GT(r["safety"]["overlaps"].get<int>(), 0);
  EXPECT_GT(r["safety"]["lost_updates"].get<int>(), 0) << "the dead client's write counts as confirmed";
}

// The same inside release(): the client left its section (its end is real),
// then died before the compare-and-delete was sent.
TEST_F(LocklabBinary, HolderDyingInsideReleaseStillShowsItsOverlap) {
  const auto run = run_locklab("run --lock lua-safe-delete --clients 2 --hold 150 --ttl 50 --duration 1 "
                               "--step before-release:crash:0 --json " + path("release.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = result("release.json");
  EXPECT_EQ(r["verdict"], "violation") << r["verdict_reasons"];
  EXPECT_EQ(r["totals"]["crashed_clients"], 1);
  EXPECT_GT(r["safety"]["overlaps"].get<int>(), 0);
}

// Generation 3 dies between its GET and its DEL with its lease intact: no
// overlap, and the section it finished is counted, so the counter is exact
// (before, its increment was on the counter but not on record).
TEST_F(LocklabBinary, HolderDyingBetweenGetAndDelIsSafeAndCounted) {
  const auto run = run_locklab("run --lock set-nx-px-token --clients 2 --hold 2 --ttl 500 --ops 30 "
                               "--step after-get-before-del:crash:0 --json " + path("g3.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = result("g3.json");
  EXPECT_EQ(r["totals"]["crashed_clients"], 1);
  EXPECT_EQ(r["verdict"], "safe") << r["verdict_reasons"];
  EXPECT_EQ(r["counter"]["expected"], r["counter"]["actual"]) << "the dead client's increment is on record";
  EXPECT_EQ(r["fairness"]["per_client_acquired"][0], 1) << "client 0 died in its first release";
}

TEST_F(LocklabBinary, FencingKeepsTheCounterExactWhenTheLeaseLapses) {
  // hold 150 ms > ttl 50 ms: every lease lapses mid-section and the next client
  // gets in. Unfenced, updates are lost; fenced, the stale holder is refused.
  const std::string slow = " --clients 3 --duration 0.8 --hold 150 --ttl 50 --json ";
  ASSERT_EQ(run_locklab("run --lock lua-safe-delete" + slow + path("g4.json")).exit_code, 0);
  const json unfenced = result("g4.json");
  EXPECT_EQ(unfenced["verdict"], "violation");
  EXPECT_GT(unfenced["safety"]["overlaps"].get<int>(), 0);

  ASSERT_EQ(run_locklab("run --lock fenced" + slow + path("g7.json")).exit_code, 0);
  const json fenced = result("g7.json");
  EXPECT_EQ(fenced["verdict"], "safe") << fenced["verdict_reasons"];
  EXPECT_GT(fenced["safety"]["stale_writes_rejected"].get<int>(), 0);
  EXPECT_GT(fenced["safety"]["overlaps_fenced_off"].get<int>(), 0) << "the lease did lapse";
  EXPECT_EQ(fenced["safety"]["max_concurrent_holders"], 1) << "refused holders are not holders of the resource";
  EXPECT_EQ(fenced["safety"]["lost_updates"], 0);
  EXPECT_EQ(fenced["counter"]["expected"], fenced["counter"]["actual"]);
}

// Issue 16 §5: one client, a hold three times its lease: the key expires under
// the holder and nobody is there to enter. Safe, but by luck: exposed.
TEST_F(LocklabBinary, ALeaseLostUnderALoneHolderIsSafeButExposed) {
  ASSERT_EQ(run_locklab("run --lock lua-safe-delete --clients 1 --ops 1 --ttl 50 --hold 150 --json " +
                        path("lone.json")).exit_code, 0);
  const json lone = result("lone.json");
  EXPECT_EQ(lone["verdict"], "safe") << lone["verdict_reasons"];
  EXPECT_EQ(lone["exposed"], true);
  EXPECT_EQ(lone["safety"]["leases_lost_inside"], 1) << "the release script found the key gone";
  EXPECT_EQ(lone["safety"]["leases_lost_nobody_entered"], 1);
  EXPECT_NE(lone["verdict_reasons"].dump().find("safe by luck, not by design"), std::string::npos);

  // A blind DEL tells it too: DEL answers 0, the release is already_expired (EXPIRE takes whole seconds).
  ASSERT_EQ(run_locklab("run --lock setnx-expire --clients 1 --ops 1 --ttl 1000 --hold 1300 --json " +
                        path("blind.json")).exit_code, 0);
  const json blind = result("blind.json");
  EXPECT_EQ(blind["verdict"], "safe") << blind["verdict_reasons"];
  EXPECT_EQ(blind["exposed"], true);
  EXPECT_EQ(blind["safety"]["leases_lost_inside"], 1);

  // The same holder inside its lease: nothing lost, nothing exposed.
  ASSERT_EQ(run_locklab("run --lock lua-safe-delete --clients 1 --ops 1 --ttl 2000 --hold 5 --json " +
                        path("kept.json")).exit_code, 0);
  const json kept = result("kept.json");
  EXPECT_EQ(kept["verdict"], "safe");
  EXPECT_EQ(kept["exposed"], false);
  EXPECT_EQ(kept["safety"]["leases_lost_inside"], 0);
}

TEST_F(LocklabBinary, WaitReplicasStartsAReplicaAndGuardsEveryAcquire) {
  const auto run = run_locklab("run --lock lua-safe-delete --wait-replicas 1 --clients 2 --ops 40 --expect-safe "
                               "--json " + path("guarded.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json r = result("guarded.json");
  EXPECT_EQ(r["config"]["wait_replicas"], 1);
  EXPECT_EQ(r["totals"]["errors"], 0) << "the started replica acknowledged every lock";
  EXPECT_EQ(r["counter"]["expected"], r["counter"]["actual"]);
  // SET NX + WAIT + the release script's GET and DEL, at least, on the lock server.
  EXPECT_GE(r["cost"]["server_commands_per_acquisition"].get<double>(), 4.0);
}

TEST_F(LocklabBinary, UnreachableRedisIsARuntimeFailureWithNoResult) {
  const auto run = run_locklab("run --lock lua-safe-delete --redis 127.0.0.1:1 --ops 10 --json " + path("none.json"));
  EXPECT_EQ(run.exit_code, 1);
  expect_one_line(run.err);
  EXPECT_NE(run.err.find("127.0.0.1:1"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(path("none.json")));
}

TEST_F(LocklabBinary, BadFlagsAreUsageErrors) {
  const std::string json = " --json " + path("bad.json");
  const std::vector<std::string> cases = {
      "run" + json, "run --lock no-such-lock" + json, "run --lock no-lock --clients 0" + json,
      "run --lock no-lock --clients many" + json, "run --lock no-lock --mode fibers" + json,
      "run --lock no-lock --ops 5 --duration 1" + json, "run --lock no-lock --redis nonsense" + json,
      "run --lock no-lock --hold -1" + json, "run --lock no-lock --step p:explode" + json,
      "run --lock no-lock --json /nonexistent-dir/x.json", "frobnicate",
      "run --lock setnx --wait-replicas 1" + json, "run --lock lua-safe-delete --wait-replicas -1" + json,
      "run --lock setnx --clients 2 --step locklab:cs-enter:crash:5" + json,
      "run --lock setnx --mode thread --step locklab:cs-enter:pause:0" + json,
      "run --lock setnx --ttl 2000000000" + json, "run --lock setnx --ops 999999999999" + json, "compare --lock no-such-lock",
      "report --out " + path("r")};
  for (const auto& args : cases) {
    const auto run = run_locklab(args);
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.err;
    expect_one_line(run.err);
    EXPECT_FALSE(fs::exists(path("bad.json"))) << args;
  }
  EXPECT_EQ(run_locklab("run --help").exit_code, 0);
  EXPECT_EQ(run_locklab("compare --help").exit_code, 0);
}

TEST_F(LocklabBinary, CompareWritesRunsReportAndCounterTable) {
  const auto run = run_locklab("compare --quick --duration 0.4 --clients 3 --lock no-lock --lock lua-safe-delete "
                               "--out " + path("cmp"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(result("cmp/no-lock.json")["verdict"], "violation");
  EXPECT_EQ(result("cmp/lua-safe-delete.json")["verdict"], "safe");
  EXPECT_TRUE(fs::exists(path("cmp/report.md")));
  EXPECT_NE(slurp(path("cmp/report.html")).find("<svg"), std::string::npos);
  EXPECT_NE(run.out.find("Counter demo"), std::string::npos) << run.out;

  // `report` re-renders stored runs; a file that is no run is a usage error.
  EXPECT_EQ(run_locklab("report " + path("cmp/no-lock.json") + " " + path("cmp/lua-safe-delete.json") + " --out " +
                        path("again")).exit_code, 0);
  EXPECT_TRUE(fs::exists(path("again/report.html")));
  EXPECT_EQ(run_locklab("report " + path("cmp/report.md") + " --out " + path("bad")).exit_code, 2);
}

}  // namespace
}  // namespace locklab::harness
