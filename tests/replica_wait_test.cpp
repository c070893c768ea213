// The WAIT guard (LockConfig::wait_replicas) on a real master + replica:
// without it a lock the replica never received is reported as held (what a
// failover then loses); with it, the same acquire is refused and undone.
#include <gtest/gtest.h>

#include "registry.h"

#include "servers/redis_server.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;

class ReplicaWaitTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto started = harness::start_master_with_replica();
    ASSERT_TRUE(started) << started.error().message;
    servers_ = std::move(started).value();
    auto connection = redis::Connection::connect(master().connection_options());
    ASSERT_TRUE(connection);
    admin_.emplace(std::move(connection).value());
  }

  harness::RedisServer& master() { return *servers_[0]; }
  harness::RedisServer& replica() { return *servers_[1]; }

  std::unique_ptr<DistributedLock> lock(int wait_replicas, StepHook step = {}) {
    LockConfig config;
    config.step = std::move(step);
    config.key = "locklab:replicated";
    config.ttl = 5s;
    config.servers = {master().connection_options()};
    config.wait_replicas = wait_replicas;
    config.wait_replicas_timeout = 150ms;
    auto made = make_lock(GetParam(), config);
    EXPECT_TRUE(made) << made.error().message;
    return made ? std::move(made).value() : nullptr;
  }

  bool key_exists() { return admin_->command({"EXISTS", "locklab:replicated"})->integer() == 1; }

  harness::ServerList servers_;
  std::optional<redis::Connection> admin_;
};

TEST_P(ReplicaWaitTest, AcquiresWhenTheReplicaAcknowledges) {
  auto guarded = lock(1);
  ASSERT_EQ(guarded->try_acquire(0ms), Acquire::acquired) << guarded->last_error();
  EXPECT_EQ(guarded->release(), Release::released);
}

TEST_P(ReplicaWaitTest, UnguardedLockIsHeldThoughTheReplicaNeverGotIt) {
  replica().pause();
  auto unguarded = lock(0);
  EXPECT_EQ(unguarded->try_acquire(0ms), Acquire::acquired);
  EXPECT_TRUE(key_exists()) << "held on the master only: a failover now would lose it";
  replica().resume();
}

TEST_P(ReplicaWaitTest, GuardRefusesAndUndoesALockTheReplicaDidNotAcknowledge) {
  replica().pause();
  auto guarded = lock(1);
  EXPECT_EQ(guarded->try_acquire(0ms), Acquire::error);
  EXPECT_NE(guarded->last_error().find("only 0 of 1 replica"), std::string::npos) << guarded->last_error();
  EXPECT_FALSE(key_exists()) << "the refused lock must be released, not left to expire";
  replica().resume();
}

// The guard's undo can fail too (here: the lock's connection is killed right
// before it). Then the hold may still be on the master, so the outcome is
// `unknown`, never `error` ("nothing reached the server").
TEST_P(ReplicaWaitTest, GuardWhoseUndoFailsReportsUnknown) {
  replica().pause();
  auto guarded = lock(1, [this](std::string_view point) {
    if (point != "before-undo") return;
    ASSERT_TRUE(admin_->command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}));
  });
  EXPECT_EQ(guarded->try_acquire(0ms), Acquire::unknown) << guarded->last_error();
  EXPECT_NE(guarded->last_error().find("undoing it failed"), std::string::npos) << guarded->last_error();
  EXPECT_TRUE(key_exists()) << "the undo never ran: the hold is still there, as `unknown` warns";
  replica().resume();
}

TEST(ReplicaWaitConfig, NegativeReplicaCountIsRejected) {
  LockConfig config;
  config.servers = {redis::ConnectionOptions{}};
  config.wait_replicas = -1;
  auto made = make_lock("lua-safe-delete", config);
  ASSERT_FALSE(made);
  EXPECT_NE(made.error().message.find("wait_replicas"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Generations, ReplicaWaitTest, ::testing::Values("lua-safe-delete", "reentrant-watchdog"));

}  // namespace
}  // namespace locklab::testing
