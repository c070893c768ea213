// Generation 5 (`reentrant-watchdog`) against a real redis-server: reentrancy,
// owner checks, the watchdog versus an explicit lease, a SIGKILLed holder, the
// pub/sub wake-up (and its lost-wake-up window), many lock objects per process
// and fork()ed clients.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <thread>

#include "g5_reentrant_watchdog.h"
#include "registry.h"
#include "renewal_timer.h"
#include "unlock_subscriber.h"

#include "fixtures/redis_fixture.h"
#include "fixtures/step_arrivals.h"
#include "scenario/step_gate.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Lock = std::unique_ptr<ReentrantWatchdogLock>;

class ReentrantWatchdogTest : public RedisTest {
 protected:
  static constexpr const char* kKey = "locklab:g5";

  LockConfig cfg(std::chrono::milliseconds ttl, bool watchdog = true) const {
    LockConfig c = config(ttl, kKey);
    c.watchdog = watchdog;
    return c;
  }

  static Lock make(const LockConfig& c) {
    auto made = ReentrantWatchdogLock::create(c);
    EXPECT_TRUE(made) << made.error().message;
    if (!made) return nullptr;
    return Lock(static_cast<ReentrantWatchdogLock*>(made->release()));
  }

  long long pttl() { return run({"PTTL", kKey}).integer(); }
  long long holds(const ReentrantWatchdogLock& lock) {
    auto count = run({"HGET", kKey, lock.owner_field()}).string();
    return count ? std::stoll(*count) : 0;
  }

  // Polls PTTL (bounded) until the key is gone; the time it took, or nullopt.
  std::optional<long long> wait_until_gone(Clock::time_point since, std::chrono::milliseconds bound) {
    while (Clock::now() - since < bound) {
      if (pttl() == -2) return ms_since(since);
      std::this_thread::sleep_for(5ms);
    }
    return std::nullopt;
  }
};

TEST_F(ReentrantWatchdogTest, ReentrancyDepthThreeNeedsThreeReleases) {
  auto lock = make(cfg(10s));
  for (int depth = 1; depth <= 3; ++depth) {
    ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired) << lock->last_error();
    EXPECT_EQ(holds(*lock), depth);
  }
  EXPECT_EQ(lock->release(), Release::still_held);
  EXPECT_EQ(lock->release(), Release::still_held);
  EXPECT_EQ(holds(*lock), 1);
  EXPECT_GT(pttl(), 0) << "still held after two of three releases";
  EXPECT_EQ(lock->release(), Release::released);
  EXPECT_EQ(pttl(), -2);
  EXPECT_EQ(lock->release(), Release::already_expired);
  EXPECT_EQ(RenewalTimer::for_this_process().scheduled(), 0u) << "the final release stops the watchdog";
}

TEST_F(ReentrantWatchdogTest, NonOwnerReleaseIsRefusedAndLeavesTheLock) {
  auto holder = make(cfg(10s));
  auto other = make(cfg(10s));
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);

  EXPECT_EQ(other->release(), Release::not_owner) << "Redisson: IllegalMonitorStateException";
  EXPECT_EQ(other->try_acquire(0ms), Acquire::timed_out);

  // Another thread of the SAME lock object (same client id) is another owner.
  std::thread([&] {
    EXPECT_EQ(holder->try_acquire(0ms), Acquire::timed_out);
    EXPECT_EQ(holder->release(), Release::not_owner);
  }).join();

  EXPECT_EQ(holds(*holder), 1);
  EXPECT_EQ(run({"HLEN", kKey}).integer(), 1);
  EXPECT_EQ(holder->release(), Release::released);
}

// The watchdog's point (fault matrix row 3): a holder working 5x the ttl keeps the lock.
TEST_F(ReentrantWatchdogTest, WatchdogKeepsASlowHolderAndNobodyElseGetsIn) {
  auto holder = make(cfg(300ms));
  auto contender = make(cfg(300ms));
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);
  const auto start = Clock::now();
  EXPECT_EQ(contender->try_acquire(1500ms), Acquire::timed_out) << "the holder is still working";
  EXPECT_GE(ms_since(start), 1400);
  EXPECT_GT(pttl(), 0);
  EXPECT_EQ(holds(*holder), 1);
  EXPECT_EQ(holder->leases_lost(), 0u);
  EXPECT_EQ(holder->release(), Release::released);
}

// Redisson's tryLock(wait, leaseTime): a lease disables the watchdog (seeds 000, 004 §9).
TEST_F(ReentrantWatchdogTest, ExplicitLeaseExpiresWhileTheHolderWorks) {
  auto holder = make(cfg(300ms, /*watchdog=*/false));
  auto contender = make(cfg(300ms, false));
  const auto start = Clock::now();
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(RenewalTimer::for_this_process().scheduled(), 0u);
  const auto gone = wait_until_gone(start, 2s);
  ASSERT_TRUE(gone) << "the lease must expire although the holder never released";
  EXPECT_GE(*gone, 250);
  EXPECT_EQ(contender->try_acquire(0ms), Acquire::acquired) << "a second holder while the first still works";
  EXPECT_EQ(holder->release(), Release::not_owner);
  EXPECT_EQ(holds(*contender), 1);
}

// Fault matrix row 1: the renewals die with the process, the key expires within
// the watchdog timeout. Also: the child builds its own timer after fork().
TEST_F(ReentrantWatchdogTest, HolderKilledBySigkillLosesTheLockWithinTheWatchdogTimeout) {
  constexpr auto ttl = 600ms;
  {  // the parent's timer thread and subscriber exist before the fork
    auto warm = make(cfg(ttl));
    ASSERT_EQ(warm->try_acquire(0ms), Acquire::acquired);
    ASSERT_EQ(warm->release(), Release::released);
  }
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const LockConfig child_config = cfg(ttl);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    auto made = ReentrantWatchdogLock::create(child_config);
    const char ok = made && (*made)->try_acquire(0ms) == Acquire::acquired ? '1' : '0';
    if (::write(ready[1], &ok, 1) != 1) ::_exit(1);
    for (;;) ::pause();  // holds the lock "working" until killed
  }
  ::close(ready[1]);
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(ok, '1');

  std::this_thread::sleep_for(2 * ttl);
  EXPECT_GT(pttl(), 0) << "after 2x ttl the child's own watchdog must have renewed the key";

  ASSERT_EQ(::kill(child, SIGKILL), 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const auto killed = Clock::now();
  const long long left_at_kill = pttl();
  EXPECT_GT(left_at_kill, 200) << "the last renewal (<= ttl/3 ago) set it back to ttl";
  const auto gone = wait_until_gone(killed, ttl + 400ms);
  ASSERT_TRUE(gone) << "the key must expire within the watchdog timeout after the kill";
  EXPECT_GE(*gone, 150) << "it was still present for a while: the watchdog's last renewal kept it";
}

TEST_F(ReentrantWatchdogTest, BlockedWaiterIsWokenByThePublishNotByPolling) {
  auto holder = make(cfg(10s));  // the waiter is told PTTL ~ 10 s
  Arrivals attempts("after-failed-attempt");
  Arrivals waiting("before-wait");
  LockConfig waiter_config = cfg(10s);
  waiter_config.step = [&](std::string_view point) {
    attempts.hook()(point);
    waiting.hook()(point);
  };
  auto waiter = make(waiter_config);
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);

  std::atomic<long long> woke_after{-1};
  Clock::time_point released_at;
  std::thread blocked([&] {
    EXPECT_EQ(waiter->try_acquire(5s), Acquire::acquired) << waiter->last_error();
    woke_after = ms_since(released_at);
    EXPECT_EQ(waiter->release(), Release::released);  // the owner is this thread
  });
  ASSERT_TRUE(waiting.wait_for(1));
  std::this_thread::sleep_for(100ms);  // it sleeps on the channel now; polling would show as attempts
  const int attempts_while_blocked = attempts.count();
  released_at = Clock::now();
  ASSERT_EQ(holder->release(), Release::released);
  blocked.join();

  EXPECT_GE(woke_after, 0);
  EXPECT_LT(woke_after, 1000) << "woken by the PUBLISH, far sooner than the 10 s PTTL or the 5 s wait";
  EXPECT_EQ(attempts_while_blocked, 2) << "one attempt, then one retry after SUBSCRIBE, then it sleeps";
}

// The unlock lands after the waiter's retry failed but before it sleeps: the
// subscription (taken before that retry) has counted the message, so the wait
// returns at once. A waiter that subscribed after its retry would lose it and
// sleep for the whole PTTL.
TEST_F(ReentrantWatchdogTest, UnlockBetweenFailedRetryAndSleepIsNotLost) {
  auto holder = make(cfg(10s));
  StepGate before_wait("before-wait");
  LockConfig waiter_config = cfg(10s);
  waiter_config.step = before_wait.hook();
  auto waiter = make(waiter_config);
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);

  std::atomic<long long> took{-1};
  std::thread blocked([&] {
    const auto start = Clock::now();
    EXPECT_EQ(waiter->try_acquire(5s), Acquire::acquired) << waiter->last_error();
    took = ms_since(start);
    EXPECT_EQ(waiter->release(), Release::released);
  });
  ASSERT_TRUE(before_wait.wait_arrival());
  ASSERT_EQ(holder->release(), Release::released);  // published while nobody waits
  std::this_thread::sleep_for(50ms);                 // let the message reach the subscriber
  before_wait.open();
  blocked.join();
  EXPECT_GE(took, 0);
  EXPECT_LT(took, 2000) << "the missed-while-busy unlock must still wake it (PTTL was 10 s)";
}

// The thundering herd, counted. Four waiters sleep on a held lock; the holder
// releases, and each winner holds until the test lets it go, then releases in
// turn. A waiter woken for nothing retries, finds the lock held and fails: the
// failed attempts after everyone slept are the wake-ups wasted.
class HerdTest : public ReentrantWatchdogTest {
 protected:
  static constexpr int kWaiters = 4;

  struct Counts {
    std::atomic<int> waits{0};
    std::atomic<int> failed{0};
  };

  // Runs the chain; `before_letting_go(round, counts)` runs while the round's
  // winner holds the lock. Returns the failed attempts after all four slept.
  template <typename WhileWinnerHolds>
  int wasted_wakeups(bool redisson_compatible, WhileWinnerHolds before_letting_go) {
    Counts counts;
    LockConfig base = cfg(30s);  // PTTL 30 s: a waiter wakes only by a message
    base.redisson_compatible = redisson_compatible;
    auto holder = make(base);
    EXPECT_EQ(holder->try_acquire(0ms), Acquire::acquired);

    std::mutex mutex;
    std::condition_variable changed;
    int acquired = 0, let_go = 0;
    std::vector<Lock> waiters;
    LockConfig waiter_config = base;
    waiter_config.step = [&counts](std::string_view point) {
      if (point == "before-wait") ++counts.waits;
      if (point == "after-failed-attempt") ++counts.failed;
    };
    for (int i = 0; i < kWaiters; ++i) waiters.push_back(make(waiter_config));
    std::vector<std::thread> threads;
    for (auto& waiter : waiters) {
      threads.emplace_back([&, lock = waiter.get()] {
        EXPECT_EQ(lock->try_acquire(20s), Acquire::acquired) << lock->last_error();
        std::unique_lock guard(mutex);
        const int my_round = ++acquired;
        changed.notify_all();
        changed.wait(guard, [&] { return let_go >= my_round; });
        guard.unlock();
        EXPECT_EQ(lock->release(), Release::released);
      });
    }
    for (auto until = Clock::now() + 10s; counts.waits < kWaiters && Clock::now() < until;)
      std::this_thread::sleep_for(2ms);
    EXPECT_EQ(counts.waits.load(), kWaiters) << "every waiter must be asleep before the first release";
    const int failed_before = counts.failed;
    EXPECT_EQ(holder->release(), Release::released);
    for (int round = 1; round <= kWaiters; ++round) {
      {
        std::unique_lock guard(mutex);
        EXPECT_TRUE(changed.wait_for(guard, 10s, [&] { return acquired >= round; })) << "round " << round;
      }
      before_letting_go(round, counts, failed_before);
      std::lock_guard guard(mutex);
      let_go = round;
      changed.notify_all();
    }
    for (auto& thread : threads) thread.join();
    return counts.failed - failed_before;
  }
};

TEST_F(HerdTest, ReleaseWakesOneWaiterNotTheHerd) {
  const int wasted = wasted_wakeups(false, [](int, Counts& counts, int failed_before) {
    // A herd shows within this window as failed attempts (the winner holds).
    for (auto until = Clock::now() + 50ms; counts.failed == failed_before && Clock::now() < until;)
      std::this_thread::sleep_for(1ms);
  });
  EXPECT_EQ(wasted, 0) << "each release woke exactly the next waiter, who took the lock";
  EXPECT_EQ(run({"EXISTS", "locklab_lock__waiters:{locklab:g5}"}).integer(), 0) << "the queue empties";
}

// The same chain in Redisson's broadcast mode: every release wakes every
// remaining waiter; all but the winner retry for nothing (3 + 2 + 1).
TEST_F(HerdTest, RedissonBroadcastWakesEveryWaiterOnEachRelease) {
  int expected = 0;
  const int wasted = wasted_wakeups(true, [&](int round, Counts& counts, int failed_before) {
    expected += kWaiters - round;  // the losers of this round, while the winner holds
    for (auto until = Clock::now() + 10s; counts.failed - failed_before < expected && Clock::now() < until;)
      std::this_thread::sleep_for(1ms);
    EXPECT_EQ(counts.failed - failed_before, expected) << "round " << round;
  });
  EXPECT_EQ(wasted, 3 + 2 + 1);
}

// A queued waiter that is gone (crashed: nobody listens on its channel) is
// skipped: PUBLISH answers 0, the release drops it and wakes the next one.
TEST_F(ReentrantWatchdogTest, ReleaseSkipsAQueuedWaiterNobodyListensFor) {
  auto holder = make(cfg(30s));
  Arrivals waiting("before-wait");
  LockConfig waiter_config = cfg(30s);
  waiter_config.step = waiting.hook();
  auto waiter = make(waiter_config);
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);
  run({"ZADD", holder->waiters_key(), "0", "crashed-client:1"});  // oldest: ahead of everyone

  std::atomic<long long> took{-1};
  std::thread blocked([&] {
    const auto start = Clock::now();
    EXPECT_EQ(waiter->try_acquire(10s), Acquire::acquired) << waiter->last_error();
    took = ms_since(start);
    EXPECT_EQ(waiter->release(), Release::released);
  });
  ASSERT_TRUE(waiting.wait_for(1));
  EXPECT_EQ(run({"ZCARD", holder->waiters_key()}).integer(), 2);
  ASSERT_EQ(holder->release(), Release::released);
  blocked.join();
  EXPECT_GE(took, 0);
  EXPECT_LT(took, 5000) << "woken by the release (the crashed head skipped), not by the 30 s PTTL";
  EXPECT_EQ(run({"ZSCORE", holder->waiters_key(), "crashed-client:1"}).string(), std::nullopt);
}

// A wait that runs out leaves the queue: a later release must not spend its
// one wake-up on a thread that stopped waiting.
TEST_F(ReentrantWatchdogTest, TimedOutWaiterLeavesTheQueue) {
  auto holder = make(cfg(30s));
  auto waiter = make(cfg(30s));
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);
  std::thread([&] { EXPECT_EQ(waiter->try_acquire(100ms), Acquire::timed_out); }).join();
  EXPECT_EQ(run({"ZCARD", holder->waiters_key()}).integer(), 0);
  EXPECT_EQ(holder->release(), Release::released);
}

TEST_F(ReentrantWatchdogTest, RenewalFindingTheKeyGoneCountsALostLease) {
  auto holder = make(cfg(300ms));
  auto admin_lock = make(cfg(300ms));
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(admin_lock->force_unlock(), Release::released) << "forceUnlock: no owner check";
  EXPECT_EQ(pttl(), -2);
  const auto start = Clock::now();
  while (holder->leases_lost() == 0 && Clock::now() - start < 2s) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(holder->leases_lost(), 1u) << "the next renewal (<= ttl/3) must report the loss";
  EXPECT_EQ(pttl(), -2) << "a renewal never recreates a lost key";
  EXPECT_EQ(holder->release(), Release::already_expired);
  EXPECT_EQ(holder->leases_lost(), 1u) << "counted once";
  EXPECT_EQ(admin_lock->force_unlock(), Release::already_expired);
}

TEST_F(ReentrantWatchdogTest, ReleaseThatFindsTheLockGoneCountsTheLossOnce) {
  auto holder = make(cfg(3s));  // first renewal only after 1 s
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);
  run({"DEL", kKey});
  EXPECT_EQ(holder->release(), Release::already_expired);
  EXPECT_EQ(holder->leases_lost(), 1u);
  EXPECT_EQ(RenewalTimer::for_this_process().scheduled(), 0u);
}

// The renewal finds the old hold gone; before the timer acts on that, the
// same thread acquires afresh. The loss is counted and the NEW hold keeps
// being renewed (dropping its renewal would let it expire under the holder).
TEST_F(ReentrantWatchdogTest, FreshHoldRacingALostRenewalKeepsItsWatchdog) {
  constexpr auto ttl = 600ms;
  StepGate after_renewal("after-renewal-script");
  LockConfig c = cfg(ttl);
  c.step = after_renewal.hook();
  auto holder = make(c);
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);
  run({"DEL", kKey});                            // lost before the first renewal (ttl/3 = 200 ms)
  ASSERT_TRUE(after_renewal.wait_arrival(2s));   // the renewal answered 0; the timer is parked
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(holds(*holder), 1) << "a fresh hold, not a re-entry";
  after_renewal.open();
  const auto start = Clock::now();
  while (holder->leases_lost() == 0 && Clock::now() - start < 2s) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(holder->leases_lost(), 1u);
  std::this_thread::sleep_for(2 * ttl);
  EXPECT_GT(pttl(), 0) << "the fresh hold must still be renewed";
  EXPECT_EQ(holder->release(), Release::released);
  EXPECT_EQ(holder->leases_lost(), 1u);
}

TEST_F(ReentrantWatchdogTest, LostAcquireReplyIsUnknown) {
  LockConfig c = cfg(10s);
  c.servers.front().command_timeout = 200ms;
  auto lock = make(c);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);  // loads the scripts
  ASSERT_EQ(lock->release(), Release::released);
  server().pause();
  const auto outcome = lock->try_acquire(0ms);
  server().resume();
  EXPECT_EQ(outcome, Acquire::unknown) << "the script may have run: " << lock->last_error();
  EXPECT_FALSE(lock->last_error().empty());
  EXPECT_EQ(lock->try_acquire(0ms), Acquire::acquired) << "reconnects: " << lock->last_error();
  // The paused server ran the lost script on resume (a hold of 1 we never
  // learned of). The fresh acquire must not stack on it, or one release would
  // leave the lock held - and renewed by nobody's watchdog - until ttl.
  EXPECT_EQ(lock->release(), Release::released);
  EXPECT_EQ(run({"EXISTS", kKey}).integer(), 0) << "one acquire, one release: the key is gone";
}

// The release-side twin of LostAcquireReplyIsUnknown: a release that errors
// (here its connection was killed first, so the script never ran) must not
// leave this object counting a hold. Otherwise the next acquire went out as a
// re-entry (HINCRBY), made the count 2, and every release from then on
// answered still_held while the watchdog kept the lock forever.
TEST_F(ReentrantWatchdogTest, FailedReleaseLeavesNoStaleCountForTheNextAcquire) {
  auto lock = make(cfg(10s));
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  ASSERT_TRUE(admin().command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}));
  ASSERT_EQ(lock->release(), Release::error) << "the lock's connection is gone";
  EXPECT_EQ(holds(*lock), 1) << "the script never ran: the server still counts our one hold";

  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired) << lock->last_error();
  EXPECT_EQ(holds(*lock), 1) << "a fresh acquire, not a re-entry stacked on the stale count";
  EXPECT_EQ(lock->release(), Release::released);
  EXPECT_EQ(pttl(), -2) << "one acquire, one release: the key is gone";
  EXPECT_EQ(RenewalTimer::for_this_process().scheduled(), 0u) << "and nobody renews it";
}

// One timer thread renews every lock of the process. A hung server (SIGSTOP)
// used to hold that thread for the lock's command timeout (2 s), longer than
// another server's whole lease: that lease lapsed. Each renewal round trip is
// now bounded by lease/12, so the healthy lease keeps being renewed.
TEST_F(ReentrantWatchdogTest, OneHungServerDoesNotLetAnotherServersLeaseLapse) {
  constexpr auto ttl = 1200ms;  // renewed every 400 ms; the hung server's command timeout is 2 s
  auto healthy_server = harness::RedisServer::start();
  ASSERT_TRUE(healthy_server) << healthy_server.error().message;
  LockConfig healthy_config = cfg(ttl);
  healthy_config.servers = {(*healthy_server)->connection_options()};
  auto healthy = make(healthy_config);
  auto on_hung = make(cfg(ttl));
  auto observer = redis::Connection::connect((*healthy_server)->connection_options());
  ASSERT_TRUE(healthy && on_hung && observer);
  ASSERT_EQ(on_hung->try_acquire(0ms), Acquire::acquired);
  ASSERT_EQ(healthy->try_acquire(0ms), Acquire::acquired);

  server().pause();
  std::optional<long long> lapsed_after;
  const auto start = Clock::now();
  while (Clock::now() - start < 3s && !lapsed_after) {  // longer than one hung 2 s round trip
    auto left = observer->command({"PTTL", kKey});
    if (!left || left->integer() <= 0) lapsed_after = ms_since(start);
    std::this_thread::sleep_for(20ms);
  }
  server().resume();

  EXPECT_FALSE(lapsed_after) << "the healthy lease lapsed after " << lapsed_after.value_or(0) << " ms";
  EXPECT_EQ(healthy->leases_lost(), 0u);
  EXPECT_EQ(healthy->release(), Release::released);
}

// Seed 000: Redisson's unlock of a missing key publishes the unlock message.
// We publish too (waiters may go), but answer already_expired, not released
// (documented departure, docs/generations.md).
// Both wake-up modes: broadcast (Redisson's channel) and queued (the oldest
// waiter's own channel; here a bare listener queued by hand).
TEST_F(ReentrantWatchdogTest, ReleaseOfAMissingKeyPublishesLikeRedissonButSaysAlreadyExpired) {
  for (const bool redisson_compatible : {true, false}) {
    SCOPED_TRACE(redisson_compatible ? "broadcast" : "queued");
    LockConfig c = cfg(10s);
    c.redisson_compatible = redisson_compatible;
    auto lock = make(c);
    ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
    run({"DEL", kKey});
    auto listener = redis::Connection::connect(server().connection_options());
    ASSERT_TRUE(listener);
    const std::string channel = redisson_compatible ? lock->channel() : lock->waiter_channel("listener:1");
    if (!redisson_compatible) run({"ZADD", lock->waiters_key(), "0", "listener:1"});
    ASSERT_TRUE(listener->send({"SUBSCRIBE", channel}));
    ASSERT_TRUE(listener->read_until(Clock::now() + 5s)) << "SUBSCRIBE confirmed";

    EXPECT_EQ(lock->release(), Release::already_expired);
    auto message = listener->read_until(Clock::now() + 5s);
    ASSERT_TRUE(message) << "no unlock message: " << message.error().message;
    ASSERT_TRUE(message->is_array());
    EXPECT_EQ(message->element(0).text(), "message");
    EXPECT_EQ(message->element(2).text(), "0");
  }
}

// Seed 000: forceUnlockAsync() cancels the renewal BEFORE its script. Checked
// at the step point right before the script: nothing is scheduled any more.
TEST_F(ReentrantWatchdogTest, ForceUnlockCancelsRenewalBeforeItsScript) {
  std::optional<std::size_t> scheduled_at_script;
  LockConfig c = cfg(10s);
  c.step = [&scheduled_at_script](std::string_view point) {
    if (point == "before-force-unlock-script") scheduled_at_script = RenewalTimer::for_this_process().scheduled();
  };
  auto lock = make(c);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  ASSERT_EQ(RenewalTimer::for_this_process().scheduled(), 1u);
  EXPECT_EQ(lock->force_unlock(), Release::released);
  ASSERT_TRUE(scheduled_at_script) << "step point not reached";
  EXPECT_EQ(*scheduled_at_script, 0u) << "the renewal still ran while the script deleted the key";
  EXPECT_EQ(lock->leases_lost(), 0u);
}

long long total_connections_received(redis::Connection& admin) {
  auto info = admin.command({"INFO", "stats"});
  if (!info) return -1;
  const std::string_view text = info->text();
  const std::string_view field = "total_connections_received:";
  const auto at = text.find(field);
  return at == std::string_view::npos ? -1 : std::atoll(std::string(text.substr(at + field.size(), 20)).c_str());
}

// A hung server (or a half-open connection) sends nothing, and poll(-1) waited
// for it forever: a sleeping waiter was never woken. The subscriber PINGs a
// quiet connection and gives up on it without an answer, which wakes waiters.
TEST_F(ReentrantWatchdogTest, SubscriberNoticesAHungServerAndWakesItsWaiters) {
  auto subscription = UnlockSubscriber::for_server(server().connection_options())
                          ->subscribe("locklab:quiet-channel", Clock::now() + 5s);
  ASSERT_TRUE(subscription) << subscription.error().message;
  server().pause();
  const auto start = Clock::now();
  const bool woken = (*subscription)->wait_until(start + 20s);
  const auto took = ms_since(start);
  server().resume();
  EXPECT_TRUE(woken) << "the dead connection went unnoticed for 20 s";
  EXPECT_LT(took, 10'000) << "noticed only after " << took << " ms";
}

// With nothing subscribed, a lost subscriber connection is not replaced (it
// used to reconnect at once, and again every 100 ms while the server was
// down); the next subscribe() connects again.
TEST_F(ReentrantWatchdogTest, SubscriberDoesNotReconnectWithNothingSubscribed) {
  auto subscriber = UnlockSubscriber::for_server(server().connection_options());
  {
    auto subscription = subscriber->subscribe("locklab:idle-channel", Clock::now() + 5s);
    ASSERT_TRUE(subscription) << subscription.error().message;
  }  // nothing subscribed any more
  const auto unsubscribed_by = Clock::now() + 5s;
  while (run({"PUBSUB", "NUMSUB", "locklab:idle-channel"}).element(1).integer() != 0 && Clock::now() < unsubscribed_by)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(run({"PUBSUB", "NUMSUB", "locklab:idle-channel"}).element(1).integer(), 0);

  const long long before = total_connections_received(admin());
  run({"CLIENT", "KILL", "TYPE", "pubsub"});
  run({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});  // the subscriber's, unsubscribed
  bool reconnected = false;
  const auto start = Clock::now();
  while (Clock::now() - start < 1s && !reconnected) {  // ten reconnect pauses
    reconnected = total_connections_received(admin()) != before;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_FALSE(reconnected) << "reconnected with nothing subscribed";

  auto again = subscriber->subscribe("locklab:idle-channel", Clock::now() + 5s);
  EXPECT_TRUE(again) << "a new subscription connects on demand: " << again.error().message;
}

TEST_F(ReentrantWatchdogTest, BadConfigIsAnErrorValue) {
  LockConfig c = cfg(2ms);
  EXPECT_FALSE(ReentrantWatchdogLock::create(c));
  c.servers.front().endpoint.port = 1;
  c.ttl = 1s;
  EXPECT_FALSE(ReentrantWatchdogLock::create(c)) << "unreachable server";
}

// Critical section for the mutual-exclusion tests: a read-modify-write that
// loses updates without mutual exclusion.
bool increment(redis::Connection& connection, const std::string& counter) {
  auto value = connection.command({"GET", counter});
  if (!value) return false;
  const long long next = (value->string() ? std::stoll(*value->string()) : 0) + 1;
  return connection.command({"SET", counter, std::to_string(next)}).ok();
}

std::size_t threads_in_this_process() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++count;
  return count;
}

TEST_F(ReentrantWatchdogTest, ManyLockObjectsAcrossThreadsShareOneTimerAndOneSubscriber) {
  constexpr int kThreads = 6, kRounds = 15;
  std::atomic<int> inside{0}, max_inside{0}, done{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&] {
      auto lock = make(cfg(2s));
      auto connection = redis::Connection::connect(server().connection_options());
      ASSERT_TRUE(connection);
      for (int round = 0; round < kRounds; ++round) {
        ASSERT_EQ(lock->try_acquire(10s), Acquire::acquired) << lock->last_error();
        const int now_inside = ++inside;
        max_inside = std::max(max_inside.load(), now_inside);
        ASSERT_TRUE(increment(*connection, "counter"));
        --inside;
        ASSERT_EQ(lock->release(), Release::released);
        ++done;
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(done, kThreads * kRounds);
  EXPECT_EQ(max_inside, 1);
  EXPECT_EQ(run({"GET", "counter"}).string(), std::to_string(kThreads * kRounds));
  EXPECT_LE(threads_in_this_process(), 3u) << "main + one renewal timer + one subscriber reader";
}

TEST_F(ReentrantWatchdogTest, ForkedClientsEachGetTheirOwnServices) {
  constexpr int kChildren = 3, kRounds = 15;
  {  // the parent's services exist (and may be mid-use) when it forks
    auto warm = make(cfg(1s));
    ASSERT_EQ(warm->try_acquire(0ms), Acquire::acquired);
    ASSERT_EQ(warm->release(), Release::released);
  }
  const LockConfig child_config = cfg(1s);
  const auto server_options = server().connection_options();
  std::vector<pid_t> children;
  for (int i = 0; i < kChildren; ++i) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      auto made = ReentrantWatchdogLock::create(child_config);
      auto connection = redis::Connection::connect(server_options);
      if (!made || !connection) ::_exit(2);
      for (int round = 0; round < kRounds; ++round) {
        if ((*made)->try_acquire(10s) != Acquire::acquired) ::_exit(3);
        if (!increment(*connection, "counter")) ::_exit(4);
        if ((*made)->release() != Release::released) ::_exit(5);
      }
      ::_exit(0);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  EXPECT_EQ(run({"GET", "counter"}).string(), std::to_string(kChildren * kRounds));
  EXPECT_EQ(pttl(), -2);
}

// The race of this generation (seed 001 §二.5 Redis分布式锁的缺点, fault matrix row 7): the master
// acknowledges the lock, the replica never gets it, the master dies and the
// replica is promoted: a second client acquires while the first still holds.
// The replica is detached before the acquire (so the write deterministically
// never reaches it; SIGSTOP on a replica does not stop replication: the bytes
// wait in its socket buffer and are applied on SIGCONT). The
// WAIT guard refuses that acquire instead.
TEST(ReentrantWatchdogReplicaTest, FailoverToAReplicaWithoutTheKeyGivesASecondHolder) {
  auto started = harness::start_master_with_replica();
  ASSERT_TRUE(started) << started.error().message;
  auto& master = *(*started)[0];
  auto& replica = *(*started)[1];
  auto replica_admin = redis::Connection::connect(replica.connection_options());
  ASSERT_TRUE(replica_admin);
  ASSERT_TRUE(replica_admin->command({"REPLICAOF", "NO", "ONE"}));  // the replication stream stops here

  LockConfig on_master;
  on_master.key = "locklab:g5-failover";
  on_master.ttl = 5s;
  on_master.servers = {master.connection_options()};
  LockConfig guarded = on_master;
  guarded.wait_replicas = 1;
  guarded.wait_replicas_timeout = 150ms;
  auto refused = ReentrantWatchdogLock::create(guarded);
  ASSERT_TRUE(refused);
  EXPECT_EQ((*refused)->try_acquire(0ms), Acquire::error) << "the guard sees 0 of 1 replica acknowledge";

  auto first = ReentrantWatchdogLock::create(on_master);
  ASSERT_TRUE(first);
  ASSERT_EQ((*first)->try_acquire(0ms), Acquire::acquired) << "the unguarded acquire is acknowledged by the master";
  master.crash();  // failover: the replica (already a master) takes over, without the key

  LockConfig on_new_master = on_master;
  on_new_master.servers = {replica.connection_options()};
  auto second = ReentrantWatchdogLock::create(on_new_master);
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)->try_acquire(0ms), Acquire::acquired)
      << "two holders: the first never released, the new master never heard of it";
}

// The WAIT guard on a re-entry: a refused re-entry undoes only its own level.
TEST(ReentrantWatchdogReplicaTest, RefusedReentryUndoesOnlyItsOwnLevel) {
  auto started = harness::start_master_with_replica();
  ASSERT_TRUE(started) << started.error().message;
  auto& master = *(*started)[0];
  auto& replica = *(*started)[1];
  LockConfig c;
  c.key = "locklab:g5-replicated";
  c.ttl = 5s;
  c.servers = {master.connection_options()};
  c.wait_replicas = 1;
  c.wait_replicas_timeout = 500ms;
  auto admin = redis::Connection::connect(master.connection_options());
  ASSERT_TRUE(admin);
  // A replica fresh from its initial sync may be slow to acknowledge its first WAIT.
  ASSERT_TRUE(admin->command({"SET", "warm-up", "1"}));
  ASSERT_EQ(admin->command({"WAIT", "1", "5000"})->integer(), 1);
  auto made = ReentrantWatchdogLock::create(c);
  ASSERT_TRUE(made) << made.error().message;
  auto& lock = static_cast<ReentrantWatchdogLock&>(**made);
  ASSERT_EQ(lock.try_acquire(0ms), Acquire::acquired) << lock.last_error();
  replica.pause();
  EXPECT_EQ(lock.try_acquire(0ms), Acquire::error);
  EXPECT_NE(lock.last_error().find("only 0 of 1 replica"), std::string::npos) << lock.last_error();
  replica.resume();
  EXPECT_EQ(admin->command({"HGET", c.key, lock.owner_field()})->string(), "1") << "the outer hold survives";
  EXPECT_EQ(lock.release(), Release::released);
}

}  // namespace
}  // namespace locklab::testing
