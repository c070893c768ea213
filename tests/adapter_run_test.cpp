// Any adapter as the lock of a run (issue 18 §1, §6, §7): `locklab run --lock
// ext:NAME` and `--adapter 'CMD ARGS'` through the real binary, and measure()
// where a test must watch the client processes. Each broken adapter of
// tests/adapters/ makes the run `error` with one line naming it and what it
// did, within its bound, and leaves no process; a lying one is a violation.
// Needs Debian's python3 (and python3-redis for the redis-py runs; skipped
// with a message without it).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "redis/connection.h"

#include "fixtures/run_documents.h"
#include "run/run.h"
#include "run/run_document.h"
#include "servers/redis_server.h"
#include "support/client_cgroup.h"
#include "support/conditions.h"
#include "support/process_control.h"
#include "sweeps/matrix.h"

namespace locklab::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_locklab;

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, where python3-redis lives
const std::string kAdapters = LOCKLAB_TEST_ADAPTERS_DIR;
const std::string kRedisPy = std::string(LOCKLAB_PEERS_DIR) + "/python/redis_py.py";

bool python_redis_installed() {
  return std::system((std::string(kPython) + " -c 'import redis' >/dev/null 2>&1").c_str()) == 0;
}

// A word no other process carries: the adapters ignore extra arguments, so it
// marks this test's adapter processes in /proc.
std::string fresh_marker() {
  static int count = 0;
  return "locklab-adapter-run-test-" + std::to_string(::getpid()) + "-" + std::to_string(++count);
}

// The live processes whose command line holds `marker` (a zombie's is empty).
std::vector<pid_t> processes_with(const std::string& marker) {
  std::vector<pid_t> found;
  std::error_code error;  // processes come and go while we read: never throw
  for (fs::directory_iterator it("/proc", error), end; !error && it != end; it.increment(error)) {
    const fs::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string line = testing::slurp(entry.path().string() + "/cmdline");
    for (char& c : line)
      if (c == '\0') c = ' ';
    if (line.find(marker) != std::string::npos) found.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return found;
}

class AdapterRun : public testing::RunDocumentsTest {
 protected:
  AdapterRun() : RunDocumentsTest("locklab-adapter-run") {}

  // `locklab run --lock ext:bad --adapter 'python3 ADAPTER ARGS MARKER' EXTRA`:
  // its document, after checking the exit code, the bound and that no process
  // of the adapter is left.
  json run_bad(const std::string& adapter_args, int want_exit, const std::string& extra,
               std::chrono::seconds bound = std::chrono::seconds{30}) {
    const std::string marker = fresh_marker();
    const auto started = std::chrono::steady_clock::now();
    const auto run = run_locklab("run --lock ext:bad --adapter '" + std::string(kPython) + " " + kAdapters + "/" +
                                 adapter_args + " " + marker + "' " + extra + " --json " + path("bad.json"));
    EXPECT_LT(std::chrono::steady_clock::now() - started, bound) << "a broken adapter must not hang the run";
    EXPECT_EQ(run.exit_code, want_exit) << run.out << run.err;
    EXPECT_TRUE(processes_with(marker).empty()) << "an adapter process outlived the run";
    last_out_ = run.out;
    return result("bad.json");
  }

  // The first verdict reason is the one line; the summary printed it too, once.
  void expect_one_line(const json& d, const std::string& names, const std::string& did) {
    ASSERT_EQ(d["verdict"], "error") << d["verdict_reasons"];
    ASSERT_FALSE(d["verdict_reasons"].empty());
    const std::string line = d["verdict_reasons"][0];
    EXPECT_NE(line.find("adapter " + names), std::string::npos) << line;
    EXPECT_NE(line.find(did), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_NE(last_out_.find("  - " + line + "\n"), std::string::npos) << last_out_;
  }

  // `lock` under unavailable:at=release:mode=refuse (3 clients, 1.5 s): the
  // run's fault record, after checking that the fault acted on refused requests.
  json refused_release_fault(const std::string& lock, const std::string& file) {
    EXPECT_TRUE(fs::is_directory(std::string(LOCKLAB_PEERS_DIR) + "/kits/js/node_modules"))
        << "harness/adapters/kits/js/node_modules is missing: run harness/adapters/kits/js/install";
    const auto run = run_locklab("run --lock " + lock + " --clients 3 --duration 1.5 --ttl 500 --hold 20 "
                                 "--stall 250 --fault unavailable:at=release:mode=refuse --json " + path(file));
    EXPECT_NE(run.exit_code, 2) << run.err;
    document_ = result(file);
    if (document_["faults"].size() != 1u) {
      ADD_FAILURE() << "one fault record expected: " << document_["faults"];
      return json::object();
    }
    const json fault = document_["faults"][0];
    EXPECT_TRUE(fault["acted"].get<bool>()) << fault;
    EXPECT_GT(fault["refused"]["count"].get<long long>(), 0) << fault;
    return fault;
  }

  std::string last_out_;
  json document_;  // refused_release_fault()'s whole run document
};

// ---- a shipped adapter and one that is not ------------------------------------

TEST_F(AdapterRun, RedisPyIsALockOfARunAndItsRoundTripIsRecorded) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const auto run = run_locklab("run --lock ext:redis-py --clients 4 --ops 200 --json " + path("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json d = result("r.json");
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_EQ(d["counter"]["expected"], d["counter"]["actual"]);
  EXPECT_EQ(d["totals"]["acquired"], 200);
  EXPECT_EQ(d["generation"]["number"], "ext");
  const json& adapter = d["adapters"]["ext:redis-py"];
  EXPECT_EQ(adapter["library"], "redis-py");
  EXPECT_EQ(adapter["language"], "python");
  EXPECT_FALSE(adapter["version"].get<std::string>().empty());
  EXPECT_EQ(adapter["capabilities"], json({"expires", "owner_checked_release"})) << "the catalog's words";
  EXPECT_EQ(adapter["noop_us"]["count"], 300);
  // Recorded relative to the source tree: a committed result names no machine's checkout.
  EXPECT_EQ(adapter["command"].back(), "harness/adapters/python/redis_py.py") << adapter["command"];
  EXPECT_GT(adapter["noop_us"]["p50"].get<long long>(), 0);
  EXPECT_GE(adapter["noop_us"]["p99"], adapter["noop_us"]["p50"]);
  EXPECT_GT(adapter.value("start_ms", 0.0), 0.0) << "its start cost (spawn to init_ok) is not recorded";

  const auto report = run_locklab("report " + path("r.json") + " --out " + path("report"));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string md = testing::slurp(path("report/report.md"));
  EXPECT_NE(md.find("| adapter round trip p50/p99 µs |"), std::string::npos) << md;
  EXPECT_NE(md.find(" " + std::to_string(adapter["noop_us"]["p50"].get<long long>()) + " / " +
                    std::to_string(adapter["noop_us"]["p99"].get<long long>()) + " |"),
            std::string::npos)
      << md;
}

TEST_F(AdapterRun, AnUnshippedAdapterIsDescribedByItsInitOk) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const std::string marker = fresh_marker();
  const auto run = run_locklab("run --lock ext:mine --adapter '" + std::string(kPython) + " " + kRedisPy + " " +
                               marker + "' --clients 3 --ops 60 --json " + path("mine.json"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json d = result("mine.json");
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_EQ(d["config"]["adapter"], std::string(kPython) + " " + kRedisPy + " " + marker);
  EXPECT_EQ(d["adapters"]["ext:mine"]["library"], "redis-py");
  EXPECT_EQ(d["adapters"]["ext:mine"]["capabilities"], json({"expires", "owner_checked_release"}));
  EXPECT_TRUE(processes_with(marker).empty());
}

// docs/adapters.md, "Your own lock in 10 minutes": tests/adapters/mine.py, the section's
// adapter on the Python kit, is a lock of `locklab run` as it stands, and its
// compare-and-delete holds where a late release meets the next holder's key
// (the matrix's release-race spec, parked at its script on the wire).
TEST_F(AdapterRun, YourOwnLockInTenMinutesRunsAndItsLateReleaseDeletesNothing) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const std::string mine = std::string(kPython) + " " + kAdapters + "/mine.py";
  const auto run = run_locklab("run --lock ext:mine --adapter '" + mine + "' --clients 3 --ops 60 --json " +
                               path("ten.json"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json d = result("ten.json");
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_EQ(d["totals"]["acquired"], 60);
  EXPECT_EQ(d["adapters"]["ext:mine"]["library"], "mine");
  EXPECT_EQ(d["adapters"]["ext:mine"]["language"], "python");
  EXPECT_EQ(d["adapters"]["ext:mine"]["capabilities"], json({"expires", "owner_checked_release"}));

  const auto race = run_locklab("run --lock ext:mine --adapter '" + mine + "' --clients 2 --ops 6 --ttl 500 --hold 250"
                                " --wait 1000 --retry 5 --oracle --fault 'holder-pause:at=resp:EVALSHA|EVAL:ms=375'"
                                " --json " + path("race.json"));
  const json r = result("race.json");
  EXPECT_EQ(r["verdict"], "safe") << r["verdict_reasons"] << race.err;
  EXPECT_EQ(r["safety"]["wrong_owner_releases"], 0);
  EXPECT_EQ(r["faults"][0]["acted"], true) << r["faults"];
}

// A node restart blinds the witness's feed on that node, so the lease the holder
// lost there is known only from the fault's own reading of the key (DUMP before
// and after). A lock whose replayed attempt then wins the empty node for nobody
// keeps every client out: the run must read exposed, with an unavailability of
// the rest of the run, never plainly safe -- and the matrix's class is liveness.
TEST_F(AdapterRun, AHoldNobodyAcquiredAfterARestartIsNotPlainlySafe) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const std::string ghost = std::string(kPython) + " " + kAdapters + "/ghost_after_error.py";
  const auto run = run_locklab("run --lock ext:ghost --adapter '" + ghost + "' --clients 3 --duration 1.5 --ttl 2000"
                               " --hold 300 --wait 30 --retry 5 --oracle"  // a hold long enough that a waiter replays first
                               " --fault node-crash:nodes=1:restart=now:when=holder --json " + path("ghost.json"));
  ASSERT_NE(run.exit_code, 2) << run.err;
  const json d = result("ghost.json");
  ASSERT_EQ(d["faults"][0]["bit"], true) << d["faults"];
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_GE(d["safety"]["leases_lost_nobody_entered"].get<long long>(), 1) << d["safety"];
  EXPECT_EQ(d["exposed"], true);
  ASSERT_TRUE(d["safety"]["unavailability_ms"].is_number()) << d["safety"];
  EXPECT_GE(d["safety"]["unavailability_ms"].get<double>(), 1000.0) << "half the lease: the matrix's liveness";
}

// A shipped adapter must claim in its init_ok what the catalog says of it.
TEST_F(AdapterRun, ACatalogEntryThatDisagreesWithInitOkIsAnError) {
  const std::string marker = fresh_marker();
  const json catalog = {{"schema", "locklab.peers/1"},
                        {"peers", {{{"name", "redis-py"},
                                    {"library", "redis-py"},
                                    {"language", "python"},
                                    {"adapter", {kPython, kRedisPy, marker}},
                                    {"capabilities", {{"expires", true}, {"owner_checked_release", true},
                                                      {"auto_extends", true}}}}}}};
  std::ofstream(path("catalog.json")) << catalog.dump();
  ::setenv("LOCKLAB_PEERS_DIR", scratch_.str().c_str(), 1);
  const auto run = run_locklab("run --lock ext:redis-py --clients 2 --ops 20 --json " + path("c.json"));
  ::unsetenv("LOCKLAB_PEERS_DIR");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const json d = result("c.json");
  ASSERT_EQ(d["verdict"], "error");
  const std::string line = d["verdict_reasons"][0];
  EXPECT_NE(line.find("adapter ext:redis-py: its init_ok claims capabilities {expires, owner_checked_release}, " +
                      scratch_.str() + "/catalog.json says {auto_extends, expires, owner_checked_release}"),
            std::string::npos)
      << line;
  EXPECT_EQ(d["totals"]["attempts"], 0) << "no client runs with an adapter that misdescribes itself";
  EXPECT_TRUE(processes_with(marker).empty());
}

// ---- broken adapters: error, one line, bounded, no process left -----------------

TEST_F(AdapterRun, GarbageAtInitIsAnError) {
  const json d = run_bad("garbage.py not-json", 1, "--clients 2 --ops 20");
  expect_one_line(d, "ext:bad (", "printed a line that is not JSON: hello, I am not JSON");
  EXPECT_EQ(d["totals"]["attempts"], 0);
  EXPECT_FALSE(d["adapters"]["ext:bad"]["error"].get<std::string>().empty());
}

TEST_F(AdapterRun, AnAdapterThatExitsAtStartIsAnError) {
  const json d = run_bad("exits_at_start.py", 1, "--clients 2 --ops 20");
  expect_one_line(d, "ext:bad (", "exited with status 3 before answering init");
}

class BrokenMidRun : public AdapterRun, public ::testing::WithParamInterface<std::pair<const char*, const char*>> {};

// Client 0's adapter passes the probe, then breaks at its first acquire of the
// run; the other clients run on: the run is error all the same, the one line first.
// (An adapter that exits instead is a crashed client: AdapterDiesMidRun.)
TEST_P(BrokenMidRun, MakesTheRunAnErrorWithOneLine) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const auto [mode, did] = GetParam();
  // A duration, so client 0 surely asks (an --ops budget could be spent by the others first).
  // silent: bounded by --wait 200 + the 2000 ms margin, then the adapter is SIGKILLed.
  const json d = run_bad(std::string("breaks_mid_run.py ") + mode, 1, "--clients 3 --duration 0.5 --wait 200");
  expect_one_line(d, "ext:bad (", did);
  if (HasFatalFailure()) return;
  EXPECT_EQ(d["verdict_reasons"][0].get<std::string>().rfind("client 0: adapter ext:bad (", 0), 0u)
      << d["verdict_reasons"];
  EXPECT_EQ(d["totals"]["failed_clients"], 1);
  EXPECT_GT(d["totals"]["acquired"].get<long long>(), 0) << "the others ran";
}

INSTANTIATE_TEST_SUITE_P(
    Adapters, BrokenMidRun,
    ::testing::Values(std::pair{"not-json", "printed a line that is not JSON: hello, I am not JSON"},
                      std::pair{"shape", "answered acquire with {\"id\":"},
                      std::pair{"silent", "did not answer acquire within 2200 ms"}),
    [](const auto& info) { return std::string(info.param.first == std::string("not-json") ? "not_json" : info.param.first); });

// An adapter that exits mid-run is its client crashing (docs/adapters.md, "An adapter that
// dies"), judged like holder-crash, never error: its hold stays until the TTL, the others go
// on, and the line it died on is the reason, in the verdict and in safety.adapter_deaths.
TEST_F(AdapterRun, AdapterDiesMidRunIsACrashedClient) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const json d = run_bad("dies_holding.py", 0, "--clients 3 --duration 1 --ttl 300 --wait 700 --hold 5");
  EXPECT_NE(d["verdict"], "error") << d["verdict_reasons"];
  EXPECT_EQ(d["totals"]["crashed_clients"], 1) << d["totals"];
  EXPECT_EQ(d["totals"]["failed_clients"], 0) << d["totals"];
  ASSERT_EQ(d["safety"]["adapter_deaths"].size(), 1u) << d["safety"];
  const std::string death = d["safety"]["adapter_deaths"][0];
  EXPECT_EQ(death.rfind("client 0's adapter exited with status 1 before answering release", 0), 0u) << death;
  EXPECT_NE(death.find("the service dies on RuntimeError: the refresh was refused"), std::string::npos) << death;
  const std::string reasons = d["verdict_reasons"].dump();
  EXPECT_NE(reasons.find("(a crashed client)"), std::string::npos) << reasons;
  EXPECT_GT(d["totals"]["acquired"].get<long long>(), 1) << "the others went on";
}

// An adapter that dies inside its client's section, its watchdog with it: the client learns it
// within the hold, not at its release, and crashes there, its section open (judged like
// holder-crash). Writing the counter at the end of the hold, after the key expired and a
// contender entered, would be a violation the library did not make.
TEST_F(AdapterRun, AdapterDiesInTheSectionIsACrashNotAViolation) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const json d = run_bad("dies_renewing.py", 0, "--clients 3 --duration 3 --ttl 300 --wait 3000 --hold 600");
  EXPECT_NE(d["verdict"], "violation") << d["verdict_reasons"];
  EXPECT_NE(d["verdict"], "error") << d["verdict_reasons"];
  EXPECT_EQ(d["totals"]["crashed_clients"], 1) << d["totals"];
  ASSERT_EQ(d["safety"]["adapter_deaths"].size(), 1u) << d["safety"];
  const std::string death = d["safety"]["adapter_deaths"][0];
  EXPECT_NE(death.find("exited with status 1 during the section: the service dies on RuntimeError: the watchdog's"),
            std::string::npos)
      << death;
}

// A library call that never returns is answered by the JS kit at wait_ms + its grace as
// `unknown` with blocked_ms (harness/adapters/kits/js/protocol.js, withinWait): a finding, not an
// error; the run records it and the matrix classes it liveness (it would have hung the service).
TEST_F(AdapterRun, ABlockedCallIsLivenessNotAnError) {
  const std::string marker = fresh_marker();
  const auto run = run_locklab("run --lock ext:blocks --adapter 'node " + std::string(kAdapters) + "/blocks.js " + marker +
                               "' --clients 2 --duration 1.5 --ttl 300 --wait 200 --hold 5 --json " + path("blocks.json"));
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(processes_with(marker).empty());
  const json d = result("blocks.json");
  EXPECT_NE(d["verdict"], "error") << d["verdict_reasons"];
  EXPECT_EQ(d["safety"]["blocked_calls"], 1) << d["safety"];
  const std::string what = d["safety"]["blocked"];
  EXPECT_NE(what.find("acquire blocked"), std::string::npos) << what;
  EXPECT_NE(what.find("past its wait bound (the library still waiting)"), std::string::npos) << what;
  EXPECT_EQ(classify(d), CellClass::liveness);
  EXPECT_NE(observed_reason(d).find("acquire blocked"), std::string::npos);
}

// An adapter that says `acquired` without asking Redis, while lua-safe-delete
// clients hold the same key: a finding about the adapter, caught by the oracle.
TEST_F(AdapterRun, ALiarIsAViolationNotAnError) {
  const std::string marker = fresh_marker();
  const auto run = run_locklab("run --fleet lua-safe-delete:2,ext:liar:1 --adapter '" + std::string(kPython) + " " +
                               kAdapters + "/liar.py " + marker + "' --ops 120 --hold 2 --json " + path("liar.json"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json d = result("liar.json");
  EXPECT_EQ(d["verdict"], "violation") << d["verdict_reasons"];
  EXPECT_GT(d["safety"]["overlaps"].get<long long>(), 0);
  EXPECT_EQ(d["adapters"]["ext:liar"]["library"], "liar");
  EXPECT_TRUE(processes_with(marker).empty());
}

// ---- the key a library locks (review #1) ------------------------------------------
// Four libraries lock another key than the run's K (docs/peers.md's table,
// harness/adapters/catalog.json's `key`): what the harness reads, deletes and
// watches must be theirs.

void require_node_peers() {
  ASSERT_TRUE(fs::is_directory(std::string(LOCKLAB_PEERS_DIR) + "/kits/js/node_modules"))
      << "harness/adapters/kits/js/node_modules is missing: run harness/adapters/kits/js/install";
}

// The milliseconds from the SIGSTOP of a pause to its SIGCONT, and the SIGCONT's line.
std::pair<double, std::string> pause_length(const json& fault) {
  double stopped = -1;
  for (const auto& event : fault["applied"]) {
    const std::string what = event["what"];
    if (what.rfind("SIGSTOP", 0) == 0 && stopped < 0) stopped = event["t_ms"];
    if (what.rfind("SIGCONT", 0) == 0 && stopped >= 0) return {event["t_ms"].get<double>() - stopped, what};
  }
  return {-1, ""};
}

class LibraryKey : public AdapterRun, public ::testing::WithParamInterface<const char*> {};

// until=expired waits for the library's key: the pause lasts (about) the
// lease, not the few ms after which the run's K -- which nobody sets -- is
// "gone" (it was 14 ms for redis-semaphore before the catalog's key).
TEST_P(LibraryKey, UntilExpiredWaitsForTheKeyTheLibraryLocks) {
  require_node_peers();
  const std::string lock = std::string("ext:") + GetParam();
  const auto run = run_locklab("run --lock " + lock + " --ttl 500 --clients 3 --ops 30 --fault holder-pause:until=expired"
                               " --json " + path("k.json"));
  // The pause's length is the subject, not the race: it ends as the key expires,
  // so whether a contender got in before the holder went on varies, and a run
  // where none did says its race never ran ("not exercised", docs/harness.md "Bite").
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.out << run.err;
  const json d = result("k.json");
  if (run.exit_code == 1) {
    EXPECT_EQ(d["verdict_reasons"][0].get<std::string>().rfind("not exercised: ", 0), 0u) << d["verdict_reasons"];
  }
  const auto [ms, line] = pause_length(d["faults"][0]);
  EXPECT_NE(line.find("the key expired"), std::string::npos) << d["faults"];
  EXPECT_GE(ms, 250) << "the pause ended before the library's key (ttl 500 ms) could expire: " << d["faults"];
}

INSTANTIATE_TEST_SUITE_P(Adapters, LibraryKey,
                         ::testing::Values("redis-semaphore", "redis-lock", "node-redis-warlock", "simple-redis-mutex"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// The clean slate deletes the library's key, and the keys left are counted
// on it: a stale mutex:K without expiry on a --redis server would otherwise
// block every acquisition, and a crashed holder's mutex:K would not be seen.
TEST_F(AdapterRun, TheCleanSlateAndTheKeysLeftAreTheLibrarysKey) {
  require_node_peers();
  auto server = RedisServer::start();
  ASSERT_TRUE(server) << server.error().message;
  auto admin = redis::Connection::connect((*server)->connection_options());
  ASSERT_TRUE(admin) << admin.error().message;
  ASSERT_TRUE(admin->command({"SET", "mutex:k", "stale, no expiry"}));
  const std::string redis = " --redis " + (*server)->connection_options().endpoint.to_string() + " --key k";
  const auto clean = run_locklab("run --lock ext:redis-semaphore --clients 2 --ops 10 --wait 300" + redis +
                                 " --json " + path("clean.json"));
  ASSERT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_EQ(result("clean.json")["totals"]["acquired"], 10) << "the stale mutex:k was not deleted first";

  // The holder dies holding mutex:k (ttl 20 s) and the run ends after 1 s: the key is left.
  const auto crashed = run_locklab("run --lock ext:redis-semaphore --clients 2 --duration 1 --ttl 20000 --wait 200"
                                   " --fault holder-crash" + redis + " --json " + path("crash.json"));
  ASSERT_NE(crashed.exit_code, 2) << crashed.out << crashed.err;
  const json d = result("crash.json");
  EXPECT_EQ(d["safety"]["keys_left"], 1) << "the crashed holder's mutex:k was not counted";
  EXPECT_EQ(d["safety"]["keys_left_without_ttl"], 0);
}

// An adapter that is not shipped says its key in init_ok (redis_py.py does),
// or the faults that read the key are refused before any client starts.
TEST_F(AdapterRun, AFaultThatReadsTheKeyNeedsAnAdapterThatNamesIt) {
  const std::string marker = fresh_marker();
  const auto refused = run_locklab("run --lock ext:liar --adapter '" + std::string(kPython) + " " + kAdapters +
                                   "/liar.py " + marker + "' --ops 20 --fault holder-pause:until=expired");
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_EQ(refused.err, "locklab: --fault holder-pause:until=expired: reads the lock's key on its servers, and "
                         "ext:liar (" + std::string(kPython) + " " + kAdapters + "/liar.py " + marker +
                         ") names none (an adapter says the key it locks in its init_ok's \"key\": "
                         "docs/adapters.md)\n");
  EXPECT_TRUE(processes_with(marker).empty());

  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const auto named = run_locklab("run --lock ext:mine --adapter '" + std::string(kPython) + " " + kRedisPy + " " +
                                 marker + "' --clients 3 --ops 30 --ttl 400 --fault holder-pause:until=expired"
                                 " --json " + path("named.json"));
  // As in LibraryKey: the pause's length is the subject; its race may not have run.
  ASSERT_TRUE(named.exit_code == 0 || named.exit_code == 1) << named.out << named.err;
  if (named.exit_code == 1) {
    EXPECT_EQ(result("named.json")["verdict_reasons"][0].get<std::string>().rfind("not exercised: ", 0), 0u);
  }
  const auto [ms, line] = pause_length(result("named.json")["faults"][0]);
  EXPECT_NE(line.find("the key expired"), std::string::npos) << line;
  EXPECT_GE(ms, 200) << line;
}

// A shipped adapter whose init_ok names another key than its catalog entry: error, one line.
TEST_F(AdapterRun, AKeyInInitOkThatDisagreesWithTheCatalogIsAnError) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const std::string marker = fresh_marker();
  const json catalog = {{"schema", "locklab.peers/1"},
                        {"peers", {{{"name", "redis-py"},
                                    {"key", "mutex:{key}"},
                                    {"adapter", {kPython, kRedisPy, marker}},
                                    {"capabilities", {{"expires", true}, {"owner_checked_release", true}}}}}}};
  std::ofstream(path("catalog.json")) << catalog.dump();
  ::setenv("LOCKLAB_PEERS_DIR", scratch_.str().c_str(), 1);
  const auto run = run_locklab("run --lock ext:redis-py --clients 2 --ops 20 --json " + path("c.json"));
  ::unsetenv("LOCKLAB_PEERS_DIR");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const json d = result("c.json");
  ASSERT_EQ(d["verdict"], "error");
  EXPECT_EQ(d["verdict_reasons"][0], "adapter ext:redis-py: its init_ok says it locks 'locklab:lock', " +
                                         scratch_.str() + "/catalog.json says 'mutex:{key}' ('mutex:locklab:lock')");
  EXPECT_EQ(d["totals"]["attempts"], 0);
  EXPECT_TRUE(processes_with(marker).empty());
}

// ---- clock-skew acts on the adapter's own clock ---------------------------------

// The clock reporter of tests/adapters/ in `language`, writing its readings to `file`.
std::string reporter_command(const std::string& language, const std::string& file) {
  if (language == "python") return std::string(kPython) + " " + kAdapters + "/clock_reporter.py " + file;
  return "node " + kAdapters + "/clock_reporter.js " + file;
}

// Each client's wall-clock readings (ms since the epoch), as its reporter wrote them.
std::map<int, std::vector<long long>> clock_readings(const std::string& file) {
  std::map<int, std::vector<long long>> readings;
  std::ifstream in(file);
  int client = 0;
  long long ms = 0;
  while (in >> client >> ms) readings[client].push_back(ms);
  return readings;
}

long long wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class AdapterClockSkew : public AdapterRun, public ::testing::WithParamInterface<const char*> {
 protected:
  static constexpr long long kOffsetMs = 3'600'000;  // an hour: no scheduling delay passes for it

  // A run of two reporter clients, client 1 skewed; `wrap` goes before the adapter's command.
  // --ops counts the clients' attempts together: client 1, held back until client 0 holds,
  // must wake before client 0 has taken them all, so 40 of them, each held 20 ms (800 ms
  // of client 0 alone; 6 unheld ones once went by before a loaded machine woke client 1).
  json skewed_run(const std::string& wrap) {
    before_ = wall_ms();
    const auto run = run_locklab("run --lock ext:clock --adapter '" + wrap + reporter_command(GetParam(), file()) +
                                 "' --clients 2 --ops 40 --hold 20 --ttl 500 --fault clock-skew:client=1:offset=" +
                                 std::to_string(kOffsetMs) + " --json " + path("clock.json"));
    after_ = wall_ms();
    EXPECT_NE(run.exit_code, 2) << run.err;
    return result("clock.json");
  }
  std::string file() const { return path("clock.txt"); }
  // Every reading of `client` lies within the run, moved by `offset`.
  void expect_readings(int client, long long offset) {
    const auto readings = clock_readings(file());
    ASSERT_EQ(readings.count(client), 1u) << "client " << client << " reported no clock";
    for (const long long ms : readings.at(client)) {
      EXPECT_GE(ms, before_ + offset) << "client " << client << ": " << ms - before_ << " ms after the start";
      EXPECT_LE(ms, after_ + offset) << "client " << client << ": " << ms - after_ << " ms after the end";
    }
  }
  long long before_ = 0, after_ = 0;
};

// Node's Date.now() and Python's time.time() inside the skewed client's adapter
// run an hour ahead; the other client's adapter keeps the real time.
TEST_P(AdapterClockSkew, MovesTheClockOfTheAdaptersOwnProcess) {
  const json d = skewed_run("");
  ASSERT_EQ(d["faults"].size(), 1u);
  EXPECT_TRUE(d["faults"][0]["acted"].get<bool>()) << d["faults"] << d["verdict_reasons"];
  EXPECT_NE(d["faults"][0].dump().find("runs under the clock shim"), std::string::npos) << d["faults"];
  expect_readings(1, kOffsetMs);
  expect_readings(0, 0);
}

// An adapter started without the shim (its command drops LD_PRELOAD) keeps the
// real time: the fault did not act, and the run says so instead of judging.
TEST_P(AdapterClockSkew, AnAdapterWithoutTheShimLeavesTheFaultUnacted) {
  const json d = skewed_run("env -u LD_PRELOAD ");
  ASSERT_EQ(d["faults"].size(), 1u);
  EXPECT_FALSE(d["faults"][0]["acted"].get<bool>()) << d["faults"];
  EXPECT_EQ(d["verdict"], "error");
  EXPECT_NE(d["verdict_reasons"].dump().find("does not have the clock shim loaded"), std::string::npos)
      << d["verdict_reasons"];
  expect_readings(1, 0);
}

INSTANTIATE_TEST_SUITE_P(Languages, AdapterClockSkew, ::testing::Values("python", "javascript"));

// ---- unavailable at release: a refusal the library hides still acted ------------

// redlock-universal+failfast's using() swallows a failed release (RedLock.release answers
// false): the client hears no error while the proxy refused every request of
// it. The fault acted (the proxy refused), the record says what was heard, and
// the keys stay until their TTL: the run is judged (liveness), not `error`.
TEST_F(AdapterRun, ARefusedReleaseTheLibraryHidesStillActs) {
  const json fault = refused_release_fault("ext:redlock-universal+failfast", "u.json");
  ASSERT_FALSE(fault.empty());
  const json& d = document_;
  EXPECT_EQ(fault["refused"]["what"], "connections reset");
  // `released`; or `already_expired` when the extension the cut broke aborted using()'s signal
  // before the release began (the adapter reports the library's word for that: lost).
  const std::string heard = fault.value("release_heard", "");
  EXPECT_TRUE(heard == "released" || heard == "already_expired") << fault;
  EXPECT_EQ(fault["failure_hidden"], true) << fault;
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_GT(d["safety"]["stalls"].get<long long>(), 0) << "the refused release left the keys to their TTL";
}

// sesamecare's refused release (review 2 #1): every request of it reset, the
// client hears `error` -- the key is still its own -- not `not_owner`, which
// the harness would count as a lease lost under the holder. (Its adapter-level
// twin, with the votes refused before they are sent:
// PeerFixture.SesamecareARefusedReleaseIsAnErrorNotNotOwner.)
TEST_F(AdapterRun, SesamecareHearsARefusedReleaseAsAnError) {
  const json fault = refused_release_fault("ext:sesamecare-redlock", "s.json");
  ASSERT_FALSE(fault.empty());
  const json& d = document_;
  EXPECT_EQ(fault.value("release_heard", ""), "error") << fault;
  EXPECT_EQ(fault["failure_hidden"], false) << fault;
  EXPECT_EQ(d["safety"]["leases_lost_nobody_entered"], 0) << "a refused release read as a lease lost";
}

// The refusal lands on a client whose one connection is idle, and no request
// comes: the adapter answers `released` without sending anything. An open
// connection reset (or left open) is no refusal of a release: the fault did
// not act, and the run is `error` (the oracle's rule for a fault that did not act).
TEST_F(AdapterRun, ARefusalThatMetOnlyIdleLinksDidNotAct) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const std::string marker = fresh_marker();
  const auto run = run_locklab("run --lock ext:silent --adapter '" + std::string(kPython) + " " + kAdapters +
                               "/silent_release.py " + marker + "' --clients 2 --ops 10 --ttl 300 --hold 1 "
                               "--fault unavailable:at=release:mode=refuse --json " + path("idle.json"));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const json d = result("idle.json");
  EXPECT_EQ(d["verdict"], "error") << d["verdict_reasons"];
  ASSERT_FALSE(d["verdict_reasons"].empty());
  EXPECT_EQ(d["verdict_reasons"][0].get<std::string>().rfind("fault unavailable:at=release:mode=refuse did not act: ", 0),
            0u) << d["verdict_reasons"];
  const json& fault = d["faults"][0];
  EXPECT_EQ(fault["acted"], false) << fault;
  EXPECT_EQ(fault["refused"]["count"], 0) << fault;
  EXPECT_GE(fault["refused"]["connections_open_before"].get<long long>(), 1) << "the client's idle connection";
  EXPECT_EQ(fault.value("release_heard", ""), "released") << fault;
  EXPECT_EQ(fault["failure_hidden"], false) << fault;
  EXPECT_TRUE(processes_with(marker).empty());
}

// An adapter whose init_ok names a key it does not lock: the probe takes the
// lock once and finds that key on none of the lock's servers. `error` before
// any client runs, one line naming the adapter and the key; without the check
// `holder-pause:until=expired` would end at once, "the key expired".
TEST_F(AdapterRun, AKeyInInitOkThatTheLibraryDoesNotHoldIsAnError) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const std::string marker = fresh_marker();
  const std::string command = std::string(kPython) + " " + kAdapters + "/wrong_key.py " + marker;
  const auto run = run_locklab("run --lock ext:wrong --adapter '" + command + "' --clients 2 --ops 10 --key k "
                               "--fault holder-pause:until=expired --json " + path("wrong.json"));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const json d = result("wrong.json");
  EXPECT_EQ(d["verdict"], "error");
  ASSERT_FALSE(d["verdict_reasons"].empty());
  EXPECT_EQ(d["verdict_reasons"][0], "adapter ext:wrong (" + command + "): holds the lock, but its key 'other:k' is "
                                     "on 0 of 1 lock servers (its init_ok's key is not what the library locks)");
  EXPECT_EQ(d["totals"]["attempts"], 0) << "no client ran";
  EXPECT_TRUE(processes_with(marker).empty());
}

// ---- a crash or a pause acts on the adapter and its client together --------------

// From the coordinator, at the barrier and every tick: each client's process group (it leads
// one; its adapter is in it), and whether a stopped client's adapter is stopped too.
class GroupWatch : public Nemesis {
 public:
  std::string name() const override { return "group-watch"; }
  // Every client is set up (its adapter spawned and initialised) before the barrier opens.
  void before_run(NemesisContext& context) override { tick(context); }
  // In a client cgroup (support/client_cgroup.h) a pause freezes the cgroup: a frozen
  // process does not show 'T', the cgroup's events say it is frozen (every process in it).
  void tick(NemesisContext& context) override {
    for (const pid_t client : context.client_pids) {
      const auto members = client_members(client);
      for (const pid_t member : members)
        if (member != client) adapters.insert(member);
      const auto cgroup = client_cgroup_of(client);
      auto stopped = [&](pid_t pid) { return cgroup ? cgroup->frozen() : process_stopped(pid); };
      if (members.size() < 2 || !stopped(client)) continue;
      bool all = true;
      for (const pid_t member : members) all = all && stopped(member);
      (all ? stopped_together : stopped_alone) += 1;
    }
  }
  std::set<pid_t> adapters;
  int stopped_together = 0;  // ticks that saw a stopped client whose adapter was stopped too
  int stopped_alone = 0;     // ... whose adapter ran on
};

bool gone(pid_t pid) {
  return !fs::exists("/proc/" + std::to_string(pid)) ||
         testing::slurp("/proc/" + std::to_string(pid) + "/cmdline").find("redis_py.py") == std::string::npos;
}

RunOptions redis_py_run(std::vector<std::string> faults) {
  RunOptions options;
  options.lock = "ext:redis-py";
  options.clients = 3;
  options.ops = 40;
  options.ttl_ms = 300;
  options.faults = std::move(faults);
  return options;
}

TEST(AdapterProcessGroup, APausedHolderStopsWithItsAdapter) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  GroupWatch watch;
  auto document = measure(redis_py_run({"holder-pause:until=other-acquired"}), &watch);
  ASSERT_TRUE(document) << document.error().message;
  const json& d = *document;
  EXPECT_EQ(d["verdict"], "violation") << "redis-py's lease lapses under the paused holder: " << d["verdict_reasons"];
  EXPECT_TRUE(d["faults"][0]["acted"].get<bool>()) << d["faults"];
  EXPECT_NE(d["faults"][0]["applied"][0]["what"].get<std::string>().find("and 1 more process of its"),
            std::string::npos)
      << d["faults"];
  EXPECT_GT(watch.stopped_together, 0) << "the paused client's adapter was never seen stopped";
  EXPECT_EQ(watch.stopped_alone, 0) << "a paused client's adapter ran on";
  EXPECT_EQ(watch.adapters.size(), 3u) << "one adapter per client, in its group";
  for (const pid_t adapter : watch.adapters) EXPECT_TRUE(gone(adapter)) << "adapter " << adapter << " outlived the run";
}

TEST(AdapterProcessGroup, ACrashedHolderTakesItsAdapterAlong) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  GroupWatch watch;
  auto document = measure(redis_py_run({"holder-crash"}), &watch);
  ASSERT_TRUE(document) << document.error().message;
  const json& d = *document;
  EXPECT_NE(d["verdict"], "error") << d["verdict_reasons"];
  EXPECT_EQ(d["totals"]["crashed_clients"], 1);
  EXPECT_EQ(d["totals"]["failed_clients"], 0) << d["verdict_reasons"];
  EXPECT_EQ(watch.adapters.size(), 3u);
  for (const pid_t adapter : watch.adapters) EXPECT_TRUE(gone(adapter)) << "adapter " << adapter << " outlived the run";
}

// ---- the fault reaches the whole client: a watchdog in a session of its own -------

// `sh -c 'setsid python3 setsid_watchdog.py MARKER; :'`: the adapter and the watchdog it forks
// per lease (setsid again) are out of the client's process group. In a client cgroup the pause
// freezes them with the client, the lease lapses, and the other client gets in while the
// holder is stopped (before issue 25 the watchdog renewed on: `safe`, the pause ran to max).
std::string setsid_watchdog_run(const std::string& marker, const std::string& json_path) {
  return "run --lock ext:setsid-watchdog --adapter 'sh -c \"setsid " + std::string(kPython) + " " + kAdapters +
         "/setsid_watchdog.py " + marker + "; :\"' --clients 2 --ttl 300 --hold 20 --ops 20 "
         "--fault holder-pause:until=other-acquired:max=900 --json " + json_path;
}

TEST_F(AdapterRun, ASetsidWatchdogIsFrozenWithItsClient) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  if (no_cgroup_asked()) GTEST_SKIP() << "LOCKLAB_NO_CGROUP is set";
  if (!client_cgroups_usable()) GTEST_SKIP() << "no usable cgroup on this machine: " << probe_cgroups().why;
  const std::string marker = fresh_marker();
  const auto run = run_locklab(setsid_watchdog_run(marker, path("setsid.json")));
  const json d = result("setsid.json");
  ASSERT_TRUE(d.contains("isolation")) << run.out << run.err;
  EXPECT_TRUE(d["isolation"]["kind"] == "cgroup2" || d["isolation"]["kind"] == "cgroup1-freezer") << d["isolation"];
  const json& fault = d["faults"][0];
  EXPECT_TRUE(fault["acted"].get<bool>()) << fault;
  ASSERT_GE(fault["applied"].size(), 2u) << fault;
  EXPECT_NE(fault["applied"][0]["what"].get<std::string>().find("of its cgroup"), std::string::npos) << fault;
  EXPECT_NE(fault["applied"][1]["what"].get<std::string>().find("another client acquired and wrote"), std::string::npos)
      << "nobody got in while the holder and its watchdog were frozen: " << fault;
  EXPECT_EQ(d["verdict"], "violation") << d["verdict_reasons"];
  EXPECT_TRUE(wait_until([&] { return processes_with(marker).empty(); }, std::chrono::seconds(2)))
      << "an adapter or watchdog process outlived the run";
}

// Without a cgroup (LOCKLAB_NO_CGROUP here) the same adapter is refused: `error`, one line
// naming it and the process that left the group; nothing outlives the run.
TEST_F(AdapterRun, ASetsidWatchdogIsRefusedWithoutACgroup) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const std::string marker = fresh_marker();
  ::setenv("LOCKLAB_NO_CGROUP", "1", 1);
  const auto run = run_locklab(setsid_watchdog_run(marker, path("refused.json")));
  ::unsetenv("LOCKLAB_NO_CGROUP");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const json d = result("refused.json");
  EXPECT_EQ(d["verdict"], "error");
  // process-group when the clients refused it; none when the coordinator's probe of the adapter did.
  EXPECT_TRUE(d["isolation"]["kind"] == "process-group" || d["isolation"]["kind"] == "none") << d["isolation"];
  EXPECT_NE(d["verdict_reasons"].dump().find("left its client's process group"), std::string::npos)
      << d["verdict_reasons"];
  EXPECT_TRUE(wait_until([&] { return processes_with(marker).empty(); }, std::chrono::seconds(2)))
      << "an adapter or watchdog process outlived the run";
}

}  // namespace
}  // namespace locklab::harness
