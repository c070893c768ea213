// Generation 5's Redisson-compatible mode (LockConfig::redisson_compatible)
// against Redisson's own scripts, run by this test as "the other client".
//
// The scripts are RedissonLock#tryLockInnerAsync and #unlockInnerAsync as seed
// 000 describes them (its §二.2 加鎖流程 and §二.3 釋放鎖流程, Redisson 3.18.1): seed 000 shows
// the Lua as pictures, so the text below is Redisson 3.x's, checked line by
// line against the seed's parameter lists and step-by-step logic:
//   tryLockInnerAsync  KEYS[1] lock name; ARGV[1] lease ms, ARGV[2] UUID:threadId
//   unlockInnerAsync   KEYS[1] lock name, KEYS[2] channel; ARGV[1] unlock message
//                      (0), ARGV[2] lease ms, ARGV[3] UUID:threadId
// (Newer Redisson adds an unlock-latch key; the lock, channel and message are
// the same: docs/peers.md.)
#include <atomic>
#include <regex>
#include <thread>

#include "g5_reentrant_watchdog.h"

#include "fixtures/redis_fixture.h"
#include "scenario/step_gate.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kRedissonTryLock =
    "if (redis.call('exists', KEYS[1]) == 0) then "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; "
    "end; "
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; "
    "end; "
    "return redis.call('pttl', KEYS[1]);";

constexpr const char* kRedissonUnlock =
    "if (redis.call('exists', KEYS[1]) == 0) then "
    "redis.call('publish', KEYS[2], ARGV[1]); "
    "return 1; "
    "end;"
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then "
    "return nil;"
    "end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
    "if (counter > 0) then "
    "redis.call('pexpire', KEYS[1], ARGV[2]); "
    "return 0; "
    "else "
    "redis.call('del', KEYS[1]); "
    "redis.call('publish', KEYS[2], ARGV[1]); "
    "return 1; "
    "end; "
    "return nil;";

constexpr const char* kKey = "test_lock";  // seed 000's example
constexpr const char* kChannel = "redisson_lock__channel:{test_lock}";
constexpr const char* kRedissonField = "8743c9c0-0795-4907-87fd-6c719a6b4586:1";  // UUID:threadId
constexpr const char* kLease = "30000";  // Redisson's lockWatchdogTimeout

class RedissonCompatTest : public RedisTest {
 protected:
  std::unique_ptr<ReentrantWatchdogLock> make(StepHook step = {}) {
    LockConfig c = config(30s, kKey);
    c.redisson_compatible = true;
    c.step = std::move(step);
    auto made = ReentrantWatchdogLock::create(c);
    EXPECT_TRUE(made) << made.error().message;
    if (!made) return nullptr;
    return std::unique_ptr<ReentrantWatchdogLock>(static_cast<ReentrantWatchdogLock*>(made->release()));
  }
  redis::Reply redisson_try_lock() { return run({"EVAL", kRedissonTryLock, "1", kKey, kLease, kRedissonField}); }
  redis::Reply redisson_unlock() {
    return run({"EVAL", kRedissonUnlock, "2", kKey, kChannel, "0", kLease, kRedissonField});
  }
};

TEST_F(RedissonCompatTest, SpeaksRedissonsNames) {
  auto lock = make();
  EXPECT_EQ(lock->channel(), kChannel);
  EXPECT_TRUE(std::regex_match(lock->owner_field(),
                               std::regex("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9]+")))
      << lock->owner_field();
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(run({"TYPE", kKey}).text(), "hash");
  EXPECT_EQ(run({"HGET", kKey, lock->owner_field()}).string(), "1");
  EXPECT_EQ(lock->release(), Release::released);
}

// The Redisson client holds; a locklab client waits on Redisson's channel (no
// polling: the PTTL it was told is 30 s) and takes the lock when Redisson's
// unlock script publishes "0".
TEST_F(RedissonCompatTest, LocklabWaiterWakesWhenRedissonUnlocks) {
  ASSERT_TRUE(redisson_try_lock().is_nil()) << "Redisson's tryLockInnerAsync answers nil: acquired";
  StepGate waiting("before-wait");
  auto lock = make(waiting.hook());
  std::atomic<long long> took_ms{-1};
  Clock::time_point unlocked_at;
  std::thread waiter([&] {
    EXPECT_EQ(lock->try_acquire(20s), Acquire::acquired) << lock->last_error();
    took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - unlocked_at).count();
    EXPECT_EQ(lock->release(), Release::released);
  });
  ASSERT_TRUE(waiting.wait_arrival()) << "the locklab client must find the lock held and go to sleep";
  EXPECT_EQ(run({"PUBSUB", "NUMSUB", kChannel}).element(1).integer(), 1) << "subscribed to Redisson's channel";
  EXPECT_EQ(run({"HGET", kKey, kRedissonField}).string(), "1") << "still Redisson's: the waiter took nothing";
  unlocked_at = Clock::now();
  waiting.open();  // the unlock may land before or during the sleep: neither may be lost
  EXPECT_EQ(redisson_unlock().integer(), 1) << "Redisson's unlockInnerAsync: released and published";
  waiter.join();
  EXPECT_GE(took_ms, 0);
  EXPECT_LT(took_ms, 10'000) << "woken by Redisson's PUBLISH, not by the 30 s PTTL";
}

// The other way round: Redisson's scripts respect a lock a locklab client
// holds, and a Redisson subscriber (LockPubSub) hears the locklab release.
TEST_F(RedissonCompatTest, RedissonWaiterSeesTheLocklabHoldAndItsUnlockMessage) {
  auto lock = make();
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  const auto pttl = redisson_try_lock();
  ASSERT_TRUE(pttl.is_integer()) << "held by locklab: Redisson is told the PTTL, " << pttl.describe();
  EXPECT_GT(pttl.integer(), 0);
  EXPECT_TRUE(redisson_unlock().is_nil()) << "Redisson may not unlock a locklab hold";

  auto listener = redis::Connection::connect(server().connection_options());
  ASSERT_TRUE(listener);
  ASSERT_TRUE(listener->send({"SUBSCRIBE", kChannel}));
  ASSERT_TRUE(listener->read_until(Clock::now() + 5s)) << "SUBSCRIBE confirmed";
  EXPECT_EQ(lock->release(), Release::released);
  auto message = listener->read_until(Clock::now() + 5s);
  ASSERT_TRUE(message) << message.error().message;
  ASSERT_TRUE(message->is_array());
  EXPECT_EQ(message->element(0).text(), "message");
  EXPECT_EQ(message->element(2).text(), "0") << "LockPubSub.UNLOCK_MESSAGE";
  EXPECT_TRUE(redisson_try_lock().is_nil()) << "free again: Redisson acquires";
}

}  // namespace
}  // namespace locklab::testing
