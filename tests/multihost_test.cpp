// Several client hosts, locally: two `locklab run` processes share a run id,
// the lock server and the oracle (both started here). The start barrier and
// the occupancy oracle live on the oracle Redis; `locklab merge` judges the
// hosts together.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "redis/connection.h"

#include "fixtures/locklab_binary.h"
#include "run/merge_runs.h"
#include "run/options.h"
#include "servers/redis_server.h"
#include "support/conditions.h"

namespace locklab::testing {
namespace {

using nlohmann::json;

class MultiHost : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(scratch_.str().empty()) << "mkdtemp failed";
    auto lock_server = harness::RedisServer::start();
    ASSERT_TRUE(lock_server) << lock_server.error().message;
    lock_server_ = std::move(lock_server).value();
    auto oracle = harness::RedisServer::start();
    ASSERT_TRUE(oracle) << oracle.error().message;
    oracle_ = std::move(oracle).value();
  }
  void TearDown() override {
    lock_server_.reset();
    oracle_.reset();
  }

  std::string path(const std::string& name) const { return scratch_.path(name); }

  // One host's `locklab run` of run `run_id`. --wait 10000: four polling
  // clients on a loaded 2-core machine (the asan preset) once starved one
  // waiter past the default 1 s, and "every op acquired" is asserted.
  std::string host_args(const std::string& lock, const std::string& run_id, const std::string& host, int hosts) const {
    return "run --lock " + lock + " --clients 2 --ops 100 --hold 2 --wait 10000 --redis " + lock_server_->endpoint().to_string() +
           " --oracle " + oracle_->endpoint().to_string() + " --run-id " + run_id + " --hosts " +
           std::to_string(hosts) + " --barrier-timeout 20000 --json " + path(host + ".json");
  }

  // Two hosts at once, then merge; returns merged.json.
  json run_two_hosts(const std::string& lock, const std::string& run_id) {
    auto first = std::async(std::launch::async, [&] { return run_locklab(host_args(lock, run_id, "a", 2)); });
    const Outcome second = run_locklab(host_args(lock, run_id, "b", 2));
    const Outcome one = first.get();
    EXPECT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(second.exit_code, 0) << second.err;
    const Outcome merged = run_locklab("merge " + path("a.json") + " " + path("b.json") + " --out " + path("merged"));
    EXPECT_EQ(merged.exit_code, 0) << merged.err;
    std::ifstream in(path("merged/merged.json"));
    if (!in) return json::object();
    return json::parse(in);
  }

  // One host's run of `run_id` with extra flags; returns its document (empty when none was written).
  json one_host(const std::string& run_id, const std::string& flags, Outcome* outcome = nullptr) {
    const std::string file = path(run_id + ".json");
    const Outcome ran = run_locklab(flags + " --redis " + lock_server_->endpoint().to_string() + " --oracle " +
                                    oracle_->endpoint().to_string() + " --run-id " + run_id + " --hosts 1 --json " + file);
    if (outcome != nullptr) *outcome = ran;
    std::ifstream in(file);
    if (!in) return json::object();
    return json::parse(in);
  }

  // A command on the oracle Redis, as the test's own client; its bulk reply, if any.
  std::optional<std::string> ask_oracle(const redis::Args& args) const {
    auto connection = redis::Connection::connect(oracle_->connection_options());
    EXPECT_TRUE(connection) << connection.error().message;
    if (!connection) return std::nullopt;
    auto reply = connection->command(args);
    EXPECT_TRUE(reply) << reply.error().message;
    return reply ? reply->string() : std::nullopt;
  }

  // Waits until the oracle has seen `count` sections of run `run_id`.
  bool sections_reach(const std::string& run_id, long long count) const {
    return harness::wait_until(
        [&] {
          const auto value = ask_oracle({"GET", "locklab:run:" + run_id + ":sections"});
          return value && std::stoll(*value) >= count;
        },
        std::chrono::milliseconds{10'000}, std::chrono::milliseconds{5});
  }

  ScratchDir scratch_{"locklab-multihost"};
  std::unique_ptr<harness::RedisServer> lock_server_;
  std::unique_ptr<harness::RedisServer> oracle_;
};

TEST_F(MultiHost, SafeLockIsExactAcrossTwoHosts) {
  const json merged = run_two_hosts("lua-safe-delete", "safe-run");
  ASSERT_TRUE(merged.contains("verdict")) << "no merged.json";
  EXPECT_EQ(merged["verdict"], "safe") << merged.dump(2);
  EXPECT_EQ(merged["hosts"].size(), 2u);
  EXPECT_EQ(merged["oracle"]["max_occupancy"], 1) << "every section entered the oracle, one at a time";
  EXPECT_EQ(merged["counter"]["final"], merged["counter"]["confirmed"]);
  EXPECT_EQ(merged["acquired"], 200) << "100 ops per host, all acquired within the wait";
}

TEST_F(MultiHost, NoLockIsCaughtByTheOracleAcrossHosts) {
  const json merged = run_two_hosts("no-lock", "unsafe-run");
  ASSERT_TRUE(merged.contains("verdict")) << "no merged.json";
  EXPECT_EQ(merged["verdict"], "violation");
  EXPECT_GT(merged["oracle"]["max_occupancy"].get<long long>(), 1) << merged.dump(2);
  EXPECT_EQ(merged["hosts"][0]["verdict"], "violation");
}

TEST_F(MultiHost, ALoneHostGivesUpAtTheStartBarrier) {
  std::string args = host_args("lua-safe-delete", "lonely-run", "a", 2);
  args.replace(args.find("--barrier-timeout 20000"), std::string("--barrier-timeout 20000").size(),
               "--barrier-timeout 300");
  const Outcome alone = run_locklab(args);
  EXPECT_EQ(alone.exit_code, 1) << alone.out << alone.err;
  EXPECT_NE(alone.out.find("barrier"), std::string::npos) << alone.out;
}

TEST_F(MultiHost, RunIdNeedsAnOracleAndMergeNeedsMultiHostDocuments) {
  const Outcome no_oracle = run_locklab("run --lock lua-safe-delete --ops 10 --redis " +
                                        lock_server_->endpoint().to_string() + " --run-id x");
  EXPECT_EQ(no_oracle.exit_code, 2);
  EXPECT_NE(no_oracle.err.find("--run-id needs --oracle"), std::string::npos) << no_oracle.err;
  const Outcome own_shared = run_locklab("run --lock lua-safe-delete --ops 10 --redis " +
                                         lock_server_->endpoint().to_string() + " --run-id x --oracle");
  EXPECT_EQ(own_shared.exit_code, 2);
  EXPECT_NE(own_shared.err.find("not the run's own"), std::string::npos) << own_shared.err;

  const Outcome single = run_locklab("run --lock lua-safe-delete --ops 10 --json " + path("single.json"));
  ASSERT_EQ(single.exit_code, 0) << single.err;
  const Outcome merged = run_locklab("merge " + path("single.json"));
  EXPECT_EQ(merged.exit_code, 2);
  EXPECT_NE(merged.err.find("not a --run-id run"), std::string::npos) << merged.err;
}

TEST(MultiHostOptions, EachTopologyOptionNeedsItsPartners) {
  harness::RunOptions options;
  options.lock = "lua-safe-delete";
  options.run_id = "r";
  EXPECT_EQ(harness::validate(options), "--run-id needs --oracle (the barrier and the occupancy oracle)");
  options.oracle = redis::Endpoint{};
  EXPECT_EQ(harness::validate(options), "--run-id needs --redis or --sentinel (every host must use the same servers)");
  options.sentinels = {redis::Endpoint{}};
  EXPECT_EQ(harness::validate(options), std::nullopt);
  options.redis = {redis::Endpoint{}};
  EXPECT_EQ(harness::validate(options), "--sentinel and --redis exclude each other");
  options.sentinels.clear();
  options.run_id.clear();
  EXPECT_EQ(harness::validate(options), "--oracle HOST:PORT needs --run-id (bare --oracle starts the run's own oracle)");
  options.oracle.reset();
  options.hosts = 2;
  EXPECT_EQ(harness::validate(options), "--hosts needs --run-id");
  // The run's own oracle needs nothing else, not even --redis (a topology fault refuses it).
  options.hosts = 1;
  options.redis.clear();
  options.own_oracle = true;
  EXPECT_EQ(harness::validate(options), std::nullopt);
  options.run_id = "r";
  options.redis = {redis::Endpoint{}};
  EXPECT_EQ(harness::validate(options),
            "--run-id needs the hosts' shared oracle (--oracle HOST:PORT), not the run's own (bare --oracle)");
}

// Issue 16 §2: a client that dies inside its section used to stay a holder on
// the oracle for the rest of the run (occupancy was one INCR/DECR pair), so
// every later entry counted as an overlap: `violation` with 0 local overlaps.
// Per-holder occupancy, and the coordinator that reaps the client removes it.
TEST_F(MultiHost, AHolderThatCrashedLeavesTheOracle) {
  const json run = one_host("crashed", "run --lock lua-safe-delete --clients 3 --duration 1 --ttl 300 --fault holder-crash");
  ASSERT_TRUE(run.contains("verdict")) << "no document";
  EXPECT_EQ(run["verdict"], "safe") << run["verdict_reasons"].dump(2);
  EXPECT_FALSE(run["faults"][0]["applied"].empty()) << "the holder died inside: " << run["faults"].dump(2);
  EXPECT_EQ(run["oracles"]["redis"]["pairs"]["violations"], 0) << run["oracles"].dump(2);
  EXPECT_EQ(run["oracles"]["redis"]["max_occupancy"], 1) << run["oracles"].dump(2);
  EXPECT_EQ(run["oracles"]["agree"], true);
}

// Issue 16 §2: a fenced run whose stale sections the resource refused is safe
// on one host; through the oracle it used to be `violation` (two holders).
// The oracle now applies classify_overlap to its own order of reads and writes.
TEST_F(MultiHost, TheOracleAppliesTheFencingRule) {
  const json run = one_host("fenced", "run --lock fenced --clients 8 --duration 1 --hold 20 --ttl 300 "
                                      "--fault holder-pause:until=other-acquired");
  ASSERT_TRUE(run.contains("verdict")) << "no document";
  EXPECT_EQ(run["verdict"], "safe") << run["verdict_reasons"].dump(2);
  const json& pairs = run["oracles"]["redis"]["pairs"];
  EXPECT_EQ(pairs["violations"], 0) << run["oracles"].dump(2);
  EXPECT_GE(pairs["fenced_off"].get<long long>() + pairs["serialized"].get<long long>(), 1)
      << "the paused holder overlapped the next one: " << run["oracles"].dump(2);
  EXPECT_EQ(run["oracles"]["agree"], true);
}

// Issue 16 §2: an oracle command that failed (here: the oracle's holder hash
// made the wrong type mid-run, so every enter and leave script fails) may hide
// a holder; the run cannot then be judged and says `error`, never safe.
TEST_F(MultiHost, FailedOracleCommandsMakeTheRunAnError) {
  Outcome outcome;
  auto run = std::async(std::launch::async, [&] {
    return one_host("broken", "run --lock lua-safe-delete --clients 2 --duration 1.5 --hold 1", &outcome);
  });
  ASSERT_TRUE(sections_reach("broken", 5)) << "the run never entered the oracle";
  ask_oracle({"SET", "locklab:run:broken:holders", "not a hash"});
  const json document = run.get();
  ASSERT_TRUE(document.contains("verdict")) << outcome.err;
  EXPECT_EQ(document["verdict"], "error") << document["verdict_reasons"].dump(2);
  EXPECT_GT(document["oracles"]["redis"]["failed_commands"].get<long long>(), 0);
  EXPECT_NE(document["verdict_reasons"][0].get<std::string>().find("oracle command(s) failed"), std::string::npos)
      << document["verdict_reasons"].dump(2);
}

// Issue 16 §6: when the oracle Redis saw a violating pair the history did not
// (here: a pair of two of the run's sections pushed onto its pair list
// mid-run), the two oracles disagree and the run is `error`, with both figures.
TEST_F(MultiHost, OraclesThatDisagreeMakeTheRunAnError) {
  auto run = std::async(std::launch::async,
                        [&] { return one_host("disagree", "run --lock lua-safe-delete --clients 2 --duration 1 --hold 1"); });
  ASSERT_TRUE(sections_reach("disagree", 3)) << "the run never entered the oracle";
  ask_oracle({"RPUSH", "locklab:run:disagree:pairs", "1 2"});  // lua-safe-delete: no token, so a violation
  const json document = run.get();
  ASSERT_TRUE(document.contains("verdict"));
  EXPECT_EQ(document["verdict"], "error") << document["verdict_reasons"].dump(2);
  EXPECT_EQ(document["oracles"]["agree"], false);
  EXPECT_EQ(document["oracles"]["history"]["overlapping_pairs"], 0);
  EXPECT_EQ(document["oracles"]["redis"]["pairs"]["violations"], 1);
  EXPECT_NE(document["verdict_reasons"][0].get<std::string>().find("the two oracles disagree"), std::string::npos);
}

// Issue 25 §5b: `arrived` is never cleared, so a second run of one run id
// skipped the reset and read the first run's counter as its start. Refused.
TEST_F(MultiHost, AReusedRunIdIsRefused) {
  const json first = one_host("again", "run --lock lua-safe-delete --clients 2 --ops 20 --hold 1");
  ASSERT_EQ(first["verdict"], "safe") << first.dump(2);
  Outcome second;
  one_host("again", "run --lock lua-safe-delete --clients 2 --ops 20 --hold 1", &second);
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_EQ(std::count(second.err.begin(), second.err.end(), '\n'), 1) << second.err;
  EXPECT_NE(second.err.find("--run-id again was used before"), std::string::npos) << second.err;

  // A reuse with more hosts than the first run had is no more arrivals than
  // hosts: the first run's end (done) gives it away.
  const json once = one_host("wider", "run --lock lua-safe-delete --clients 2 --ops 20 --hold 1");
  ASSERT_EQ(once["verdict"], "safe") << once.dump(2);
  const Outcome wider = run_locklab("run --lock lua-safe-delete --clients 2 --ops 20 --hold 1 --redis " +
                                    lock_server_->endpoint().to_string() + " --oracle " +
                                    oracle_->endpoint().to_string() + " --run-id wider --hosts 2 --barrier-timeout 2000 --json " +
                                    path("wider2.json"));
  EXPECT_EQ(wider.exit_code, 2) << wider.err;
  EXPECT_EQ(std::count(wider.err.begin(), wider.err.end(), '\n'), 1) << wider.err;
  EXPECT_NE(wider.err.find("its hosts had started"), std::string::npos) << wider.err;
  EXPECT_FALSE(std::filesystem::exists(path("wider2.json"))) << "no half-written document";
}

// Issue 16 §3: a deadlocked host merged to `safe`; the worst host verdict wins.
TEST_F(MultiHost, MergeKeepsTheWorstHostVerdict) {
  const json run = one_host("deadlocked", "run --lock setnx --clients 2 --wait 200 --stall 500 --duration 1 "
                                          "--fault holder-crash");
  ASSERT_EQ(run["verdict"], "deadlock") << run["verdict_reasons"].dump(2);
  const Outcome merged = run_locklab("merge " + path("deadlocked.json") + " --out " + path("merged-deadlock"));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  const json doc = json::parse(slurp(path("merged-deadlock/merged.json")));
  EXPECT_EQ(doc["verdict"], "deadlock") << doc.dump(2);
}

// Issue 16 §3: the same host twice, or one host of two, is not the run: `error`, one reason.
TEST_F(MultiHost, MergeRefusesDuplicatesAndMissingHosts) {
  const json both = run_two_hosts("lua-safe-delete", "partial-run");
  ASSERT_EQ(both["verdict"], "safe") << both.dump(2);
  const Outcome twice = run_locklab("merge " + path("a.json") + " " + path("a.json") + " --out " + path("twice"));
  EXPECT_EQ(twice.exit_code, 1) << "an error verdict exits 1: " << twice.err;
  const json duplicate = json::parse(slurp(path("twice/merged.json")));
  EXPECT_EQ(duplicate["verdict"], "error") << duplicate.dump(2);
  EXPECT_NE(duplicate["verdict_reasons"][0].get<std::string>().find("more than once"), std::string::npos);
  const Outcome half = run_locklab("merge " + path("b.json") + " --out " + path("half"));
  EXPECT_EQ(half.exit_code, 1) << half.err;
  const json missing = json::parse(slurp(path("half/merged.json")));
  EXPECT_EQ(missing["verdict"], "error") << missing.dump(2);
  EXPECT_NE(missing["verdict_reasons"][0].get<std::string>().find("1 host document(s) for a run of 2"), std::string::npos);
}

// Issue 16 §6: a run on one host starts its own oracle (bare --oracle), also
// with a fault that lays out its own servers (no --redis); both oracles judge it.
TEST(OwnOracle, BothOraclesJudgeEveryRun) {
  ScratchDir scratch("locklab-own-oracle");
  const Outcome safe = run_locklab("run --lock lua-safe-delete --clients 2 --ops 40 --oracle --json " +
                                   scratch.path("safe.json"));
  ASSERT_EQ(safe.exit_code, 0) << safe.err;
  const json safe_doc = json::parse(slurp(scratch.path("safe.json")));
  EXPECT_EQ(safe_doc["verdict"], "safe") << safe_doc["verdict_reasons"].dump(2);
  EXPECT_EQ(safe_doc["oracles"]["agree"], true);
  EXPECT_EQ(safe_doc["oracles"]["redis"]["sections"], 40);
  EXPECT_FALSE(safe_doc.contains("multihost"));

  const Outcome unsafe = run_locklab("run --lock no-lock --clients 3 --ops 300 --hold 1 --oracle --json " +
                                     scratch.path("unsafe.json"));
  const json unsafe_doc = json::parse(slurp(scratch.path("unsafe.json")));
  EXPECT_EQ(unsafe_doc["verdict"], "violation") << unsafe_doc["verdict_reasons"].dump(2);
  EXPECT_EQ(unsafe_doc["oracles"]["agree"], true) << unsafe_doc["oracles"].dump(2);
  EXPECT_GT(unsafe_doc["oracles"]["redis"]["pairs"]["violations"].get<long long>(), 0);

  const Outcome topology = run_locklab("run --lock lua-safe-delete --clients 2 --ops 20 --oracle "
                                       "--fault net:mode=delay:ms=2 --json " + scratch.path("topology.json"));
  EXPECT_NE(topology.exit_code, 2) << "a topology fault takes the run's own oracle: " << topology.err;
  const json topology_doc = json::parse(slurp(scratch.path("topology.json")));
  EXPECT_TRUE(topology_doc["oracles"]["redis"].is_object()) << topology_doc.dump(2);
}

// Issue 16 §6: the oracle's connections are left out of the traffic counters,
// so a lock's cost per acquisition is the same with and without the oracle.
// One client, --ops bounded: no contention, so the figures are exact.
TEST(OwnOracle, TheLocksCostIsTheSameWithAndWithoutTheOracle) {
  ScratchDir scratch("locklab-oracle-cost");
  for (const std::string lock : {"lua-safe-delete", "fenced"}) {
    const std::string common = "run --lock " + lock + " --clients 1 --ops 50 --hold 0 --json ";
    const Outcome plain = run_locklab(common + scratch.path(lock + "-plain.json"));
    const Outcome watched = run_locklab(common + scratch.path(lock + "-oracle.json") + " --oracle");
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    ASSERT_EQ(watched.exit_code, 0) << watched.err;
    const json without = json::parse(slurp(scratch.path(lock + "-plain.json")))["cost"];
    const json with = json::parse(slurp(scratch.path(lock + "-oracle.json")))["cost"];
    EXPECT_EQ(with["round_trips_per_acquisition"], without["round_trips_per_acquisition"]) << lock;
    EXPECT_EQ(with["commands_sent_per_acquisition"], without["commands_sent_per_acquisition"]) << lock;
    EXPECT_EQ(with["server_commands_per_acquisition"], without["server_commands_per_acquisition"]) << lock;
  }
}

// merge_runs on hand-made documents (no Redis): a host whose counter_final is
// null (it could not read the counter) leaves the others' reading standing;
// when no host read it, the merge is `error`, one reason.
json host_document(const std::string& host, const json& counter_final) {
  return {{"lock", "setnx"},
          {"verdict", "safe"},
          {"totals", {{"acquired", 10}}},
          {"counter", {{"expected", 10}, {"unconfirmed_writes", 0}}},
          {"multihost", {{"run_id", "r"}, {"host", host}, {"hosts", 2}, {"counter_final", counter_final},
                         {"max_occupancy", 1}, {"overlapped_entries", 0}, {"violating_pairs", 0}}}};
}

TEST(MergeRuns, AHostWithoutTheCounterLeavesTheOthersReading) {
  const auto merged = harness::merge_runs({host_document("a", nullptr), host_document("b", 20)});
  ASSERT_TRUE(merged) << merged.error().message;
  EXPECT_EQ((*merged)["counter"]["final"], 20) << merged->dump(2);
  EXPECT_EQ((*merged)["verdict"], "safe") << merged->dump(2);
  const auto unread = harness::merge_runs({host_document("a", nullptr), host_document("b", nullptr)});
  ASSERT_TRUE(unread) << unread.error().message;
  EXPECT_EQ((*unread)["counter"]["final"], -1);
  EXPECT_EQ((*unread)["verdict"], "error");
  EXPECT_EQ((*unread)["verdict_reasons"], json::array({"no host could read the final counter"})) << unread->dump(2);
}

}  // namespace
}  // namespace locklab::testing
