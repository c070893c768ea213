// Seed 000 §二.2.5 鎖競爭 (Redisson's lock(): subscribe to the unlock channel,
// sleep until the message or the TTL): two waiters queue behind holder H. With
// reentrant-watchdog the release PUBLISHes on the lock's channel and each
// waiter wakes on that message, long before the PTTL it was told to sleep.
// With lua-safe-delete the waiters poll: each learns of the release only by
// asking again, one retry interval later at worst. Printed: round trips per
// waiter, time waited, and the handoff (release -> the waiter's acquire). The
// verdict is about the mechanism (a message or a retry), not about speed:
// "polling shown" or "wake-up shown" (the spec's VerdictWords), not "race shown".
#include <algorithm>
#include <atomic>
#include <mutex>

#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "scenario/step_gate.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

constexpr auto kRetryInterval = 200ms;  // the polling waiters' pause between attempts
constexpr auto kWatchdogTtl = 5s;       // generation 5: the PTTL a waiter sleeps at most

struct Waiter {
  std::string name;
  std::unique_ptr<DistributedLock> lock;
  StepLog log;
  int round_trips = 0;  // until it held the lock
  double started_ms = 0, acquired_ms = 0, freed_ms = 0;  // freed: when the lock it got was released
};

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("pubsub_wakeup"), argc, argv);
  const bool pubsub = story.lock_name() == "reentrant-watchdog";
  auto [server, probe, config] = story.single_server(pubsub ? kWatchdogTtl : 5s);
  config.retry_interval = kRetryInterval;
  auto holder = story.make_lock(config);
  std::mutex release_mutex;
  double last_release_ms = 0;
  auto release_now = [&](DistributedLock& lock) {
    story.narrator().leave();
    const Release outcome = lock.release();
    std::lock_guard guard(release_mutex);
    last_release_ms = story.narrator().now_ms();
    story.say("releases => {}", translated(to_string(outcome)));
  };

  std::vector<std::unique_ptr<Waiter>> waiters;
  for (const char* name : {"W1", "W2"}) {
    auto waiter = std::make_unique<Waiter>();
    waiter->name = name;
    LockConfig own = config;
    own.step = waiter->log.hook();
    waiter->lock = story.make_lock(own);
    waiters.push_back(std::move(waiter));
  }

  std::atomic<bool> holder_in{false}, let_go{false};
  auto h = story.actor("H", [&] {
    if (holder->try_acquire(0ms) != Acquire::acquired) story.die("H could not acquire a free lock");
    story.narrator().enter();
    holder_in = true;
    wait_until([&] { return let_go.load(); }, 20s);
    release_now(*holder);
  });
  story.wait_for("H holds the lock", [&] { return holder_in.load(); });

  std::vector<std::unique_ptr<Actor>> running;
  for (auto& waiter : waiters) {
    Waiter* w = waiter.get();
    running.push_back(story.actor(w->name, [&, w] {
      w->started_ms = story.narrator().now_ms();
      if (w->lock->try_acquire(10s) != Acquire::acquired) story.die(w->name + " never got the lock");
      w->acquired_ms = story.narrator().now_ms();
      w->round_trips = story.narrator().round_trips(w->name);
      {
        std::lock_guard guard(release_mutex);
        w->freed_ms = last_release_ms;
      }
      story.narrator().enter();
      release_now(*w->lock);
    }));
  }
  // Both waiters are waiting: parked on the channel (generation 5), or refused twice (polling).
  for (auto& waiter : waiters) {
    Waiter* w = waiter.get();
    if (pubsub)
      story.wait_for(text("{} sleeps on the unlock channel", w->name), [w] { return w->log.reached("before-wait"); });
    else
      story.wait_for(text("{} was refused twice", w->name),
                     [&, w] { return story.narrator().round_trips(w->name) >= 2; });
  }
  let_go = true;
  h->join();
  for (auto& actor : running) actor->join();

  for (const auto& w : waiters)
    story.say("{}: {} round trips to acquire, waited {} ms, handoff {} ms after the release it waited for", w->name,
              w->round_trips, fixed(w->acquired_ms - w->started_ms, 1), fixed(w->acquired_ms - w->freed_ms, 1));
  const bool woke_on_message = story.narrator().saw_push("message");
  const bool slept_full_ttl = std::any_of(waiters.begin(), waiters.end(), [](const auto& w) {
    return w->acquired_ms - w->freed_ms >= static_cast<double>(std::chrono::milliseconds(kWatchdogTtl).count());
  });
  if (pubsub && slept_full_ttl) story.die("a waiter slept its whole PTTL: the unlock message did not wake it");
  const bool polled = !woke_on_message;
  waiters.clear();  // the subscriber goes with the last lock object, before the server stops
  holder.reset();
  return story.finish(polled, polled ? text("no message was published; each waiter found the lock free on a retry "
                                            "(every {} ms)",
                                            kRetryInterval.count())
                                     : text("each release PUBLISHed on the lock's channel and the waiters woke on the "
                                            "message, before the {} ms PTTL they were told to sleep",
                                            std::chrono::milliseconds(kWatchdogTtl).count()));
}
