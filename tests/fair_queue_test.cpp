// Generation 8 (`fair-queue`) against a real redis-server: exclusion, FIFO
// handoff, one wake-up per release, crashed and timed-out waiters, the lease
// race it keeps from generation 4, and its round trips per acquisition.
#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "g8_fair_queue.h"
#include "registry.h"

#include "fixtures/redis_fixture.h"
#include "fixtures/step_arrivals.h"
#include "scenario/step_gate.h"
#include "servers/tcp_proxy.h"
#include "support/conditions.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using harness::wait_until;
using Lock = std::unique_ptr<FairQueueLock>;

// A latch the test opens: a waiter that acquired parks on it before releasing.
class Latch {
 public:
  void wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return open_; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  ~Latch() { open(); }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

class FairQueueTest : public RedisTest {
 protected:
  static constexpr const char* kKey = "locklab:g8";
  static constexpr const char* kQueue = "{locklab:g8}:queue";
  static constexpr const char* kTimeouts = "{locklab:g8}:timeouts";

  LockConfig cfg(std::string owner, std::chrono::milliseconds ttl = 10s, StepHook step = {}) const {
    LockConfig c = config(ttl, kKey);
    c.owner = std::move(owner);
    c.step = std::move(step);
    return c;
  }

  static Lock make(const LockConfig& c) {
    auto made = FairQueueLock::create(c);
    EXPECT_TRUE(made) << made.error().message;
    if (!made) return nullptr;
    return Lock(static_cast<FairQueueLock*>(made->release()));
  }

  std::optional<std::string> holder() { return run({"GET", kKey}).string(); }
  long long queued() { return run({"LLEN", kQueue}).integer(); }

  long long publish_calls() {
    const std::string info(run({"INFO", "commandstats"}).text());
    const auto at = info.find("cmdstat_publish:calls=");
    if (at == std::string::npos) return 0;
    long long calls = 0;
    const char* begin = info.data() + at + std::strlen("cmdstat_publish:calls=");
    std::from_chars(begin, info.data() + info.size(), calls);
    return calls;
  }

  long long server_now_ms() {
    auto time = run({"TIME"});
    return std::stoll(std::string(time.element(0).text())) * 1000 + std::stoll(std::string(time.element(1).text())) / 1000;
  }
};

TEST_F(FairQueueTest, IsRegisteredAsGenerationEight) {
  const Generation* generation = find_generation("fair-queue");
  ASSERT_NE(generation, nullptr);
  EXPECT_EQ(generation->number, "8");
  auto made = make_lock("fair-queue", cfg("x"));
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_FALSE(make_lock("fair-queue", cfg("x", 2ms))) << "waiters heart-beat every ttl/3";
}

TEST_F(FairQueueTest, NonOwnerReleaseIsRefusedAndLeavesTheLock) {
  auto holder_lock = make(cfg("H"));
  auto other = make(cfg("O"));
  ASSERT_EQ(holder_lock->try_acquire(0ms), Acquire::acquired) << holder_lock->last_error();
  EXPECT_EQ(holder(), holder_lock->hold_id());

  EXPECT_EQ(other->release(), Release::not_owner);
  EXPECT_EQ(other->try_acquire(0ms), Acquire::timed_out);
  EXPECT_EQ(queued(), 0) << "a single attempt (wait 0) never queues";
  EXPECT_EQ(holder(), holder_lock->hold_id());
  EXPECT_EQ(holder_lock->release(), Release::released);
  EXPECT_FALSE(holder());
}

TEST_F(FairQueueTest, LapsedLeaseReleaseIsAlreadyExpired) {
  auto lock = make(cfg("H", 100ms));
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  ASSERT_TRUE(wait_until([&] { return !holder(); }, 2s)) << "the lease must lapse";
  EXPECT_EQ(lock->release(), Release::already_expired);
}

// Its race kept from generation 4: no watchdog, so a slow holder's lease lapses
// and the waiter at the head takes the lock while the holder still works.
TEST_F(FairQueueTest, SlowHolderOverlapsTheNextWaiter) {
  auto slow = make(cfg("H", 300ms));
  auto next = make(cfg("B", 300ms));
  ASSERT_EQ(slow->try_acquire(0ms), Acquire::acquired);
  const auto start = Clock::now();
  ASSERT_EQ(next->try_acquire(5s), Acquire::acquired) << next->last_error();
  EXPECT_GE(ms_since(start), 200) << "it got in only when the lease lapsed";
  // The slow holder has not released: two holders now. Its late release is refused.
  EXPECT_EQ(slow->release(), Release::not_owner);
  EXPECT_EQ(holder(), next->hold_id());
  EXPECT_EQ(next->release(), Release::released);
}

TEST_F(FairQueueTest, ExcludesAcrossThreadsAndCostsAtMostFiveRoundTripsPerAcquisition) {
  constexpr int kClients = 4;
  constexpr int kRounds = 40;
  std::atomic<int> inside{0}, max_inside{0}, acquisitions{0}, failures{0};
  const auto before = redis::traffic();
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto lock = make(cfg("client" + std::to_string(c)));
      auto counter = redis::Connection::connect(cfg("").servers.front());
      if (!lock || !counter) return failures.fetch_add(1), void();
      for (int round = 0; round < kRounds; ++round) {
        if (lock->try_acquire(20s) != Acquire::acquired) {
          failures.fetch_add(1);
          continue;
        }
        const int now_inside = inside.fetch_add(1) + 1;
        max_inside.store(std::max(max_inside.load(), now_inside));
        // The seeds' critical section: a read-modify-write that loses updates without exclusion.
        auto value = counter->command({"GET", "counter"});
        const long long next = value && value->string() ? std::stoll(*value->string()) + 1 : 1;
        counter->command({"SET", "counter", std::to_string(next)});
        inside.fetch_sub(1);
        acquisitions.fetch_add(1);
        if (lock->release() != Release::released) failures.fetch_add(1);
      }
    });
  }
  for (auto& client : clients) client.join();
  const auto after = redis::traffic();

  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(max_inside.load(), 1);
  ASSERT_EQ(acquisitions.load(), kClients * kRounds);
  EXPECT_EQ(run({"GET", "counter"}).string(), std::to_string(kClients * kRounds)) << "no lost update";
  // acquire + GET + SET + release = 4; once per lock object: SUBSCRIBE and three SCRIPT LOADs.
  const double per_acquisition =
      static_cast<double>(after.round_trips - before.round_trips) / acquisitions.load();
  std::cout << "round trips per acquisition (4 clients, counter included): " << per_acquisition << "\n";
  EXPECT_LE(per_acquisition, 5.0);
  EXPECT_EQ(queued(), 0);
  EXPECT_EQ(run({"EXISTS", kTimeouts}).integer(), 0) << "nothing left behind";
}

TEST_F(FairQueueTest, UncontendedAcquireAndReleaseAreOneRoundTripEach) {
  auto lock = make(cfg("H"));
  ASSERT_EQ(lock->try_acquire(1s), Acquire::acquired);  // loads scripts, subscribes once
  ASSERT_EQ(lock->release(), Release::released);
  const auto before = redis::traffic();
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(lock->try_acquire(1s), Acquire::acquired);
    ASSERT_EQ(lock->release(), Release::released);
  }
  EXPECT_EQ(redis::traffic().round_trips - before.round_trips, 20u);
}

// Waiters enqueue in a known order (each only after the previous one is in the
// queue); each is handed the lock in that order.
TEST_F(FairQueueTest, WaitersAcquireInFifoOrder) {
  auto first = make(cfg("H"));
  ASSERT_EQ(first->try_acquire(0ms), Acquire::acquired);
  std::mutex order_mutex;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  for (int w = 1; w <= 4; ++w) {
    waiters.emplace_back([&, w] {
      auto lock = make(cfg("W" + std::to_string(w)));
      ASSERT_EQ(lock->try_acquire(20s), Acquire::acquired) << lock->last_error();
      {
        std::lock_guard guard(order_mutex);
        order.push_back(w);
      }
      EXPECT_EQ(lock->release(), Release::released);
    });
    ASSERT_TRUE(wait_until([&] { return queued() == w; }, 10s)) << "waiter " << w << " never queued";
  }
  ASSERT_EQ(first->release(), Release::released);
  for (auto& waiter : waiters) waiter.join();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(queued(), 0);
}

// A release publishes once, on the head's own channel: one waiter wakes, the
// others sleep on (generation 5 wakes every waiter of the key).
TEST_F(FairQueueTest, ReleaseWakesExactlyOneWaiter) {
  auto first = make(cfg("H"));
  ASSERT_EQ(first->try_acquire(0ms), Acquire::acquired);
  Arrivals woke("after-wait");
  Latch let_go;
  std::atomic<int> acquired{0};
  std::vector<std::thread> waiters;
  for (int w = 1; w <= 3; ++w) {
    waiters.emplace_back([&, w] {
      auto lock = make(cfg("W" + std::to_string(w), 10s, woke.hook()));
      ASSERT_EQ(lock->try_acquire(20s), Acquire::acquired) << lock->last_error();
      acquired.fetch_add(1);
      let_go.wait();
      EXPECT_EQ(lock->release(), Release::released);
    });
    ASSERT_TRUE(wait_until([&] { return queued() == w; }, 10s));
  }
  for (int w = 1; w <= 3; ++w)
    EXPECT_EQ(run({"PUBSUB", "NUMSUB", std::string("{locklab:g8}:w:W") + std::to_string(w)}).element(1).integer(), 1);
  const long long published_before = publish_calls();

  ASSERT_EQ(first->release(), Release::released);
  ASSERT_TRUE(wait_until([&] { return acquired.load() == 1; }, 10s));
  EXPECT_EQ(holder(), "W1:1") << "handed to the head";
  EXPECT_EQ(publish_calls() - published_before, 1) << "one message, on the head's channel";
  EXPECT_EQ(woke.count(), 1) << "only the head woke";
  EXPECT_EQ(queued(), 2);

  let_go.open();
  for (auto& waiter : waiters) waiter.join();
  EXPECT_EQ(acquired.load(), 3);
}

// The wait runs out: the waiter leaves the queue, so a release does not hand
// the lock to someone who has gone.
TEST_F(FairQueueTest, TimedOutWaiterLeavesTheQueue) {
  auto first = make(cfg("H"));
  auto impatient = make(cfg("C"));
  auto later = make(cfg("D"));
  ASSERT_EQ(first->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(impatient->try_acquire(150ms), Acquire::timed_out);
  EXPECT_EQ(queued(), 0);
  EXPECT_EQ(run({"ZCARD", kTimeouts}).integer(), 0);
  ASSERT_EQ(first->release(), Release::released);
  EXPECT_FALSE(holder()) << "not handed to the waiter that left";
  EXPECT_EQ(later->try_acquire(0ms), Acquire::acquired);
}

// Race (3): the lock is handed to a waiter between its deadline and its leave
// script. The leave script sees it: the waiter holds the lock, and says so.
TEST_F(FairQueueTest, HandoverDuringLeaveIsAnAcquisition) {
  auto first = make(cfg("H"));
  ASSERT_EQ(first->try_acquire(0ms), Acquire::acquired);
  StepGate before_leave("before-leave");
  auto late = make(cfg("C", 10s, before_leave.hook()));
  Acquire outcome = Acquire::error;
  std::thread waiter([&] { outcome = late->try_acquire(100ms); });
  ASSERT_TRUE(before_leave.wait_arrival());
  ASSERT_EQ(first->release(), Release::released);
  EXPECT_EQ(holder(), "C:1") << "handed to the waiter that is about to leave";
  before_leave.open();
  waiter.join();
  EXPECT_EQ(outcome, Acquire::acquired);
  EXPECT_EQ(late->release(), Release::released);
  EXPECT_EQ(queued(), 0);
}

// Race (2), the bounded case: the head waiter crashes (never waits, never
// heart-beats) and the release hands the lock to it before its deadline. The
// queue is held up until that lease lapses, then the next waiter takes it.
TEST_F(FairQueueTest, CrashedWaiterAtTheHeadBlocksTheQueueForAtMostOneLease) {
  constexpr auto ttl = 1500ms;
  auto first = make(cfg("H", ttl));
  ASSERT_EQ(first->try_acquire(0ms), Acquire::acquired);
  std::thread([&] {
    auto crashing = make(cfg("A", ttl, crash_at("before-wait")));
    EXPECT_THROW(crashing->try_acquire(20s), SimulatedCrash);
  }).join();  // its lock object is gone: it neither waits nor leaves
  ASSERT_EQ(queued(), 1);
  auto next = make(cfg("B", ttl));
  Acquire outcome = Acquire::error;
  long long waited_ms = 0;
  std::thread waiter([&] {
    outcome = next->try_acquire(20s);
  });
  ASSERT_TRUE(wait_until([&] { return queued() == 2; }, 10s));
  ASSERT_EQ(first->release(), Release::released);
  const auto released = Clock::now();
  EXPECT_EQ(holder(), "A:1") << "handed to the crashed waiter: its deadline had not passed";
  waiter.join();
  waited_ms = ms_since(released);
  ASSERT_EQ(outcome, Acquire::acquired) << next->last_error();
  EXPECT_GE(waited_ms, 1000) << "blocked by the crashed waiter's lease";
  EXPECT_EQ(holder(), "B:1");
  EXPECT_EQ(next->release(), Release::released);
}

// Race (2), the pruned case: a crashed waiter whose deadline passed is dropped
// by the next script run, and the release hands the lock straight to the live
// waiter behind it.
TEST_F(FairQueueTest, CrashedWaiterPastItsDeadlineIsSkipped) {
  auto first = make(cfg("H"));
  ASSERT_EQ(first->try_acquire(0ms), Acquire::acquired);
  std::thread([&] {
    auto crashing = make(cfg("A", 200ms, crash_at("before-wait")));  // its deadline: 200 ms
    EXPECT_THROW(crashing->try_acquire(20s), SimulatedCrash);
  }).join();
  auto next = make(cfg("B"));  // heart-beats every 3.3 s: stays alive
  Acquire outcome = Acquire::error;
  std::thread waiter([&] { outcome = next->try_acquire(20s); });
  ASSERT_TRUE(wait_until([&] { return queued() == 2; }, 10s));
  const auto crashed_deadline = run({"ZSCORE", kTimeouts, "A:1"}).string();
  ASSERT_TRUE(crashed_deadline);
  ASSERT_TRUE(wait_until([&] { return server_now_ms() > std::stoll(*crashed_deadline); }, 10s));

  ASSERT_EQ(first->release(), Release::released);
  EXPECT_EQ(holder(), "B:1") << "the crashed waiter was pruned, not handed the lock";
  waiter.join();
  EXPECT_EQ(outcome, Acquire::acquired) << next->last_error();
  EXPECT_EQ(queued(), 0);
  EXPECT_EQ(run({"ZCARD", kTimeouts}).integer(), 0);
  EXPECT_EQ(next->release(), Release::released);
}


// Race (4), §7b of issue 16: a queued waiter is cut off from Redis. Its next
// round fails -- the doorbell breaks while it waits (cut after-queued), or its
// heartbeat fails (cut after-wait) -- and so does its leave script: it is
// still in the queue, and the holder's release hands it the lock inside
// Redis. try_acquire must say unknown (it may hold the lock), never error.
TEST_F(FairQueueTest, WaiterCutOffWhileQueuedIsUnknownNotError) {
  constexpr auto ttl = 3s;  // a heartbeat every second
  for (const std::string point : {"after-queued", "after-wait"}) {
    SCOPED_TRACE(point);
    ASSERT_EQ(run({"FLUSHALL"}).text(), "OK");
    auto proxy = harness::TcpProxy::start(server().connection_options().endpoint);
    ASSERT_TRUE(proxy) << proxy.error().message;
    auto first = make(cfg("H", ttl));
    ASSERT_EQ(first->try_acquire(0ms), Acquire::acquired);
    std::atomic<bool> cut{false};
    LockConfig through_proxy = cfg("C", ttl, [&](std::string_view at) {
      if (at == point && !cut.exchange(true)) (*proxy)->cut();
    });
    through_proxy.servers.front().endpoint = (*proxy)->endpoint();
    auto waiter = make(through_proxy);
    const Acquire outcome = waiter->try_acquire(10s);
    EXPECT_TRUE(cut.load()) << "the waiter never reached " << point;
    EXPECT_EQ(outcome, Acquire::unknown) << waiter->last_error();
    EXPECT_EQ(queued(), 1) << "it could not leave: still queued";
    ASSERT_EQ(first->release(), Release::released);
    EXPECT_EQ(holder(), "C:1") << "the release handed the lock to the waiter that answered";
  }
}

}  // namespace
}  // namespace locklab::testing
