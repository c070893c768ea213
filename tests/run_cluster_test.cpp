// `locklab run --cluster` end to end (the built binary, real redis-server
// processes): the lock, the checked counter and the coordinator's own reads go
// through a Redis Cluster, routed by key slot. With `--cluster` alone locklab
// starts a 3-master cluster for the run (and stops it); with seeds it uses an
// existing one, here a cluster this test starts. The checker must see through
// the cluster: a client-side fault that lets two clients in is a violation.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "redis/cluster_routing.h"

#include "run/run_document.h"
#include "servers/redis_cluster.h"

#ifndef LOCKLAB_BINARY
#error "LOCKLAB_BINARY must name the built locklab executable"
#endif

namespace locklab::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class RunOnCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "locklab-run-cluster-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  Outcome locklab(const std::string& args) const {
    const std::string out = path("stdout.txt"), err = path("stderr.txt");
    const std::string command = std::string("'") + LOCKLAB_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'";
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }

  // `run ARGS --json FILE`: the document, or an empty object (the test has failed then).
  json run(const std::string& args, const std::string& file) const {
    const auto outcome = locklab("run " + args + " --json " + path(file));
    EXPECT_EQ(outcome.exit_code, 0) << args << "\n" << outcome.err << outcome.out;
    auto loaded = harness::load_run(path(file));
    EXPECT_TRUE(loaded) << (loaded ? "" : loaded.error().message);
    return loaded ? *loaded : json::object();
  }

  static std::string slurp(const std::string& file) {
    std::ifstream in(file);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::string dir_;
};

// Safe and exact: every section counted once on a counter that lives in the
// cluster, the lock key gone at the end, the topology on record.
void expect_safe_and_exact(const json& r) {
  EXPECT_EQ(r["verdict"], "safe") << r["verdict_reasons"];
  EXPECT_GT(r["totals"]["acquired"].get<long long>(), 0);
  EXPECT_EQ(r["counter"]["expected"], r["counter"]["actual"]);
  EXPECT_EQ(r["counter"]["actual"], r["totals"]["acquired"]) << "every critical section counted exactly once";
  EXPECT_EQ(r["totals"]["errors"], 0) << "no MOVED, CROSSSLOT or other error reply reached a client";
  EXPECT_EQ(r["totals"]["counter_errors"], 0);
  EXPECT_EQ(r["safety"]["keys_left"], 0) << "read on the key's own master";
  EXPECT_EQ(r["config"]["topology"], "cluster");
  EXPECT_TRUE(r["redis"]["counter_shared_with_lock_server"].get<bool>()) << "the counter went through the cluster";
  ASSERT_TRUE(r["redis"]["cluster"].is_object()) << r["redis"];
}

// Every master of a cluster this run started is gone once locklab returns.
void expect_stopped(const json& cluster) {
  for (const auto& master : cluster["masters"]) {
    redis::ConnectionOptions options;
    options.endpoint = *redis::Endpoint::parse(master.get<std::string>());
    EXPECT_FALSE(redis::Connection::connect(options)) << master << " still answers: an orphaned redis-server";
  }
}

// Each lock's keys (lock, channels, hash, queue) share one slot; the lock
// and the counter sit on whichever masters own their slots.
class StartedCluster : public RunOnCluster, public ::testing::WithParamInterface<const char*> {};

TEST_P(StartedCluster, IsSafeWithTheCounterExact) {
  const std::string lock = GetParam();
  const json r = run("--lock " + lock + " --cluster --clients 4 --duration 0.5", lock + ".json");
  expect_safe_and_exact(r);
  const json& cluster = r["redis"]["cluster"];
  EXPECT_TRUE(cluster["started"].get<bool>());
  EXPECT_EQ(cluster["masters"].size(), 3u);
  EXPECT_EQ(cluster["lock_key"]["slot"], redis::key_slot("locklab:lock"));
  EXPECT_EQ(cluster["counter_key"]["slot"], redis::key_slot("locklab:counter"));
  // Neither key's slot is the seed's (slots 0..5460): each command was routed.
  EXPECT_NE(cluster["lock_key"]["master"], cluster["seed"]);
  EXPECT_NE(cluster["counter_key"]["master"], cluster["seed"]);
  EXPECT_GT(r["cost"]["server_commands"].get<long long>(), r["counter"]["actual"].get<long long>() * 2)
      << "the commands of every master are counted, not only the seed's";
  expect_stopped(cluster);
}

INSTANTIATE_TEST_SUITE_P(Locks, StartedCluster, ::testing::Values("lua-safe-delete", "fair-queue", "reentrant-watchdog"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// The checker sees through the cluster: a holder stopped (SIGSTOP) past its
// lease overlaps the next holder, whose lock the cluster granted.
TEST_F(RunOnCluster, APausedHolderOverlapsTheNextOne) {
  const json r = run("--lock lua-safe-delete --cluster --clients 3 --ops 40 --ttl 300 "
                     "--fault holder-pause:until=other-acquired",
                     "paused.json");
  EXPECT_EQ(r["verdict"], "violation") << r["verdict_reasons"];
  EXPECT_GE(r["safety"]["max_concurrent_holders"].get<int>(), 2);
  EXPECT_EQ(r["totals"]["killed_clients"], 0);
}

// A crashed setnx holder leaves its key, without a TTL, on the master that
// owns its slot: the coordinator must look there to see it (the seed would
// answer MOVED, which reads as "no key").
TEST_F(RunOnCluster, ACrashedSetnxHolderLeavesItsKeyOnItsMaster) {
  const json r = run("--lock setnx --cluster --clients 2 --duration 1.2 --wait 200 --stall 400 --fault holder-crash",
                     "dead.json");
  EXPECT_EQ(r["verdict"], "deadlock") << r["verdict_reasons"];
  EXPECT_EQ(r["safety"]["keys_left"], 1);
  EXPECT_EQ(r["safety"]["keys_left_without_ttl"], 1);
  EXPECT_EQ(r["totals"]["crashed_clients"], 1);
}

// The fault's own probe reads the lock key on the master that owns it (not on
// the seed, which would answer MOVED and leave the holder stopped to its bound).
TEST_F(RunOnCluster, PauseUntilExpiredSeesTheKeyExpireOnItsMaster) {
  const json r = run("--lock lua-safe-delete --cluster --clients 3 --ops 40 --ttl 300 "
                     "--fault holder-pause:until=expired",
                     "expired.json");
  std::string applied;
  for (const auto& event : r["faults"][0]["applied"]) applied += event["what"].get<std::string>() + "; ";
  EXPECT_NE(applied.find("the key expired"), std::string::npos) << applied;
  EXPECT_NE(r["verdict"], "error") << r["verdict_reasons"];
}

// --cluster --fault failover (issue 27 item 3): the run starts a cluster whose key's master
// replicates through a proxy; only the replication link is held, the clients' pools pass. A lock
// without a WAIT guard loses its key on the promoted replica: the fault reads it lost (DUMP on the
// master, and on the replica as it is promoted) and a second client acquires while the first still holds.
TEST_F(RunOnCluster, FailoverOnTheClusterLosesTheKeyAndGrantsItTwice) {
  const json r = run("--lock reentrant-watchdog --cluster --clients 3 --duration 3 --ttl 2000 --hold 100 --wait 30 "
                     "--fault failover",
                     "failover.json");
  EXPECT_EQ(r["verdict"], "violation") << r["verdict_reasons"] << r["faults"];
  ASSERT_TRUE(r["faults"].is_array() && !r["faults"].empty()) << r;
  EXPECT_EQ(r["faults"][0]["bit"], true) << r["faults"][0];
  const std::string bite = r["faults"][0].value("bite", "");
  EXPECT_NE(bite.find("on the replica as it was promoted (read with replication held): not that value"),
            std::string::npos)
      << bite;
  EXPECT_NE(bite.find("usable after it"), std::string::npos) << bite;
}

TEST_F(RunOnCluster, ANodeOutsideAClusterIsARuntimeError) {
  auto plain = harness::RedisServer::start();
  ASSERT_TRUE(plain) << plain.error().message;
  const auto outcome = locklab("run --lock setnx --ops 10 --cluster --redis " + (*plain)->endpoint().to_string());
  EXPECT_EQ(outcome.exit_code, 1) << outcome.err;
  EXPECT_NE(outcome.err.find("--cluster: no seed answered CLUSTER SLOTS"), std::string::npos) << outcome.err;
}

// An existing cluster, named by a seed: nothing started, nothing stopped.
class ExistingCluster : public RunOnCluster {
 protected:
  static void SetUpTestSuite() {
    auto started = harness::RedisCluster::start();
    if (started) cluster_ = std::move(started).value();
    else why_ = started.error().message;
  }
  static void TearDownTestSuite() { cluster_.reset(); }
  void SetUp() override {
    ASSERT_TRUE(cluster_) << why_;
    ASSERT_TRUE(cluster_->flush_all());
    RunOnCluster::SetUp();
  }

  static std::string seed() { return cluster_->masters()[1]->endpoint().to_string(); }

  // The counter as the cluster holds it, read on the master owning its slot.
  static long long counter_in_cluster() {
    redis::ClusterConnection connection(cluster_->seed());
    auto reply = connection.command({"GET", "locklab:counter"});
    return reply && reply->is_string() ? std::stoll(std::string(reply->text())) : -1;
  }

  static std::unique_ptr<harness::RedisCluster> cluster_;
  static std::string why_;
};
std::unique_ptr<harness::RedisCluster> ExistingCluster::cluster_;
std::string ExistingCluster::why_;

TEST_F(ExistingCluster, RedisSeedWithClusterUsesIt) {
  const json r = run("--lock lua-safe-delete --redis " + seed() + " --cluster --clients 4 --ops 200", "seeded.json");
  expect_safe_and_exact(r);
  const json& cluster = r["redis"]["cluster"];
  EXPECT_FALSE(cluster["started"].get<bool>());
  EXPECT_EQ(cluster["seed"], seed());
  EXPECT_EQ(cluster["masters"].size(), 3u);
  EXPECT_EQ(r["counter"]["final"].get<long long>(), counter_in_cluster()) << "the counter lives in the cluster";
  EXPECT_TRUE(cluster_->wait_ready(std::chrono::milliseconds{2000})) << "the cluster outlives the run";
}

TEST_F(ExistingCluster, ClusterSeedFormIsTheSame) {
  const json r = run("--lock reentrant-watchdog --cluster " + seed() + " --clients 4 --ops 200", "seed-form.json");
  expect_safe_and_exact(r);
  EXPECT_EQ(r["config"]["redis"], json::array({seed()}));
  EXPECT_EQ(r["counter"]["final"].get<long long>(), counter_in_cluster());
}

}  // namespace
}  // namespace locklab::testing
