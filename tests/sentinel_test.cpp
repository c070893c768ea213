// Replicated + Sentinel, for real (seed 004 §10, seed 001 §二.5): three
// `redis-server --sentinel` processes, a master and a replica whose
// replication stream the TcpProxy holds. The master dies holding a lock the
// replica never got; Sentinel promotes the replica; a client that asks the
// sentinels where the master is now gets the same lock: two holders, and the
// checker says so. The WAIT guard refuses the first acquire instead (and,
// with no replica left, the second too: safety bought with availability).
#include <gtest/gtest.h>

#include "redis/connection.h"
#include "redis/sentinel.h"

#include "fixtures/failover_expectations.h"
#include "run/run.h"
#include "servers/redis_server.h"
#include "trials/sentinel_trial.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;

TEST(SentinelDiscovery, FindsTheMasterAndFollowsTheFailover) {
  auto topology = harness::SentinelTopology::start();
  ASSERT_TRUE(topology) << topology.error().message;
  auto master = redis::discover_master((*topology)->sentinels(), "m");
  ASSERT_TRUE(master) << master.error().message;
  EXPECT_EQ(master->to_string(), (*topology)->replication().master().endpoint().to_string());

  auto unknown = redis::discover_master((*topology)->sentinels(), "no-such-master");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("no master named"), std::string::npos) << unknown.error().message;

  auto promoted = (*topology)->kill_master();
  ASSERT_TRUE(promoted) << promoted.error().message;
  EXPECT_EQ(promoted->to_string(), (*topology)->replication().replica().endpoint().to_string())
      << "Sentinel promoted the replica, not something else";
  auto rediscovered = redis::discover_master((*topology)->sentinels(), "m");
  ASSERT_TRUE(rediscovered) << rediscovered.error().message;
  EXPECT_EQ(rediscovered->to_string(), promoted->to_string());
}

// A split vote leaves the sentinels waiting 2 x failover-timeout (two minutes
// here) before they elect again: kill_master then tells one sentinel to fail
// over alone. Sentinels that never see the master down stand in for a split
// vote: no election runs at all within the window.
TEST(SentinelDiscovery, KillMasterForcesAFailoverWhenNoElectionPromotes) {
  harness::SentinelSettings settings;
  settings.down_after = 60'000ms;
  settings.election_window = 500ms;
  auto topology = harness::SentinelTopology::start(settings);
  ASSERT_TRUE(topology) << topology.error().message;
  auto promoted = (*topology)->kill_master();
  ASSERT_TRUE(promoted) << promoted.error().message;
  EXPECT_EQ(promoted->to_string(), (*topology)->replication().replica().endpoint().to_string());
}

TEST(SentinelDiscovery, RediscoveryIsForLostConnectionsAndReadonlyReplies) {
  EXPECT_TRUE(redis::needs_rediscovery(Error{ErrorKind::io, "Connection refused"}));
  EXPECT_TRUE(redis::needs_rediscovery(Error{ErrorKind::closed, "Server closed the connection"}));
  EXPECT_TRUE(redis::needs_rediscovery(Error{ErrorKind::reply, "READONLY You can't write against a read only replica."}));
  EXPECT_FALSE(redis::needs_rediscovery(Error{ErrorKind::reply, "ERR wrong number of arguments"}));
  EXPECT_FALSE(redis::needs_rediscovery(Error{ErrorKind::usage, "empty key"}));
}

// `locklab run --sentinel m` with this topology's sentinels: a short run of two thread clients.
harness::RunOptions sentinel_run(const harness::SentinelTopology& topology) {
  harness::RunOptions options;
  options.lock = "lua-safe-delete";
  options.clients = 2;
  options.ops = 20;
  options.mode = harness::ClientMode::thread;
  options.sentinel_master = "m";
  for (const auto& sentinel : topology.sentinels()) options.sentinels.push_back(sentinel.endpoint);
  return options;
}

// `locklab run --sentinel`: measure() locks on the master the sentinels name,
// before the failover and, asked again, on the promoted replica after it.
TEST(SentinelDiscovery, RunLocksOnTheMasterTheSentinelsName) {
  auto topology = harness::SentinelTopology::start();
  ASSERT_TRUE(topology) << topology.error().message;
  harness::RunOptions options = sentinel_run(**topology);

  auto before = harness::measure(options);
  ASSERT_TRUE(before) << before.error().message;
  EXPECT_EQ((*before)["verdict"], "safe");
  EXPECT_EQ((*before)["config"]["redis"][0], (*topology)->replication().master().endpoint().to_string());

  auto promoted = (*topology)->kill_master();
  ASSERT_TRUE(promoted) << promoted.error().message;
  auto after = harness::measure(options);
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ((*after)["verdict"], "safe");
  EXPECT_EQ((*after)["config"]["redis"][0], promoted->to_string());
}

// --sentinel with --counter-redis (docs/topologies.md): the lock on the master
// the sentinels name, the checked counter on a server of its own.
TEST(SentinelDiscovery, CounterRedisKeepsTheCounterOffTheMaster) {
  auto topology = harness::SentinelTopology::start();
  ASSERT_TRUE(topology) << topology.error().message;
  auto counter = harness::RedisServer::start();
  ASSERT_TRUE(counter) << counter.error().message;
  harness::RunOptions options = sentinel_run(**topology);
  options.counter_redis = (*counter)->endpoint();
  ASSERT_EQ(harness::validate(options), std::nullopt);

  auto document = harness::measure(options);
  ASSERT_TRUE(document) << document.error().message;
  EXPECT_EQ((*document)["verdict"], "safe") << (*document)["verdict_reasons"].dump();
  EXPECT_EQ((*document)["config"]["redis"][0], (*topology)->replication().master().endpoint().to_string());
  EXPECT_EQ((*document)["redis"]["counter_endpoint"], (*counter)->endpoint().to_string());
  EXPECT_EQ((*document)["redis"]["counter_shared_with_lock_server"], false);
  auto on_counter = redis::Connection::connect((*counter)->connection_options());
  ASSERT_TRUE(on_counter) << on_counter.error().message;
  auto value = on_counter->command({"GET", "locklab:counter"});
  ASSERT_TRUE(value && value->is_string()) << "the counter lives on --counter-redis";
  EXPECT_EQ(std::string(value->text()), "20");
  auto on_master = redis::Connection::connect((*topology)->replication().master().connection_options());
  ASSERT_TRUE(on_master) << on_master.error().message;
  auto absent = on_master->command({"EXISTS", "locklab:counter"});
  ASSERT_TRUE(absent);
  EXPECT_EQ(absent->integer(), 0) << "not on the master";
}

TEST(SentinelFailover, UnguardedLockIsGrantedTwiceAcrossTheFailover) {
  harness::SentinelTrial trial;
  auto outcome = harness::run_sentinel_trial(trial);
  ASSERT_TRUE(outcome) << outcome.error().message;
  expect_double_grant(*outcome);
}

// A failover slower than A's lease (here: sentinels that never see the master
// down, so kill_master's forced fallback promotes, after A's 300 ms lease)
// would let B in by the TTL alone: the trial is an error, not a double grant.
TEST(SentinelFailover, AFailoverSlowerThanTheLeaseIsAnErrorNotAViolation) {
  harness::SentinelTrial trial;
  trial.ttl = 300ms;
  trial.sentinel.down_after = 60'000ms;
  trial.sentinel.election_window = 500ms;
  auto outcome = harness::run_sentinel_trial(trial);
  ASSERT_FALSE(outcome) << "verdict " << outcome->verdict.verdict;
  EXPECT_NE(outcome.error().message.find("past A's 300 ms lease"), std::string::npos) << outcome.error().message;
}

TEST(SentinelFailover, WaitGuardRefusesTheLockTheReplicaNeverGot) {
  harness::SentinelTrial trial;
  trial.wait_replicas = 1;
  auto outcome = harness::run_sentinel_trial(trial);
  ASSERT_TRUE(outcome) << outcome.error().message;
  expect_guard_refused(*outcome);
  // The guard's price: the promoted master has no replica yet, so it refuses B too
  // until one rejoins.
  EXPECT_EQ(outcome->second_acquire, "error");
  EXPECT_NE(outcome->second_error.find("only 0 of 1 replica"), std::string::npos) << outcome->second_error;
}

}  // namespace
}  // namespace locklab::testing
