// Several client hosts, locally: two `locklab run` processes share a run id,
// the lock server and the oracle (both started here). The start barrier and
// the occupancy oracle live on the oracle Redis; `locklab merge` judges the
// hosts together.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <string>

#include "options.h"
#include "redis_server.h"
#include "support/locklab_binary.h"

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

  // One host's `locklab run` of run `run_id`.
  std::string host_args(const std::string& lock, const std::string& run_id, const std::string& host, int hosts) const {
    return "run --lock " + lock + " --clients 2 --ops 100 --hold 2 --redis " + lock_server_->endpoint().to_string() +
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
  EXPECT_EQ(harness::validate(options), "--oracle needs --run-id");
  options.oracle.reset();
  options.hosts = 2;
  EXPECT_EQ(harness::validate(options), "--hosts needs --run-id");
}

}  // namespace
}  // namespace locklab::testing
