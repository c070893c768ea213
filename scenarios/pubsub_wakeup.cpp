// Seed 000 §二.2.5 鎖競爭 (Redisson's lock(): subscribe to the unlock channel,
// sleep until the message or the TTL): two waiters queue behind holder H. With
// reentrant-watchdog the release PUBLISHes on the lock's channel and each
// waiter wakes on that message, long before the PTTL it was told to sleep.
// With lua-safe-delete the waiters poll: each learns of the release only by
// asking again, one retry interval later at worst. Printed: round trips per
// waiter, time waited, and the handoff (release -> the waiter's acquire). The
// verdict is about the mechanism (a message or a retry), not about speed:
// "polling shown" or "wake-up shown" (the spec's VerdictWords), not "race shown".
// The waiter refused right after H's release is explained in the order the
// server ran the two acquires, from the server's own log of the key
// (handoff_order.h), not in the order their replies happen to be printed.
#include <atomic>

#include "scenario/handoff.h"
#include "scenario/handoff_order.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

constexpr auto kRetryInterval = 200ms;  // the polling waiters' pause between attempts
constexpr auto kWatchdogTtl = 5s;       // generation 5: the PTTL a waiter sleeps at most

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("pubsub_wakeup"), argc, argv);
  const bool pubsub = story.capabilities().notifies_waiters;
  auto [server, probe, config] = story.single_server(pubsub ? kWatchdogTtl : 5s);
  config.retry_interval = kRetryInterval;
  auto holder = story.make_lock(config);
  WaiterQueue queue(story);
  for (const char* name : {"W1", "W2"}) queue.add(name, config);

  std::atomic<bool> holder_in{false}, let_go{false};
  auto h = story.actor("H", [&] {
    if (holder->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "H");
    story.narrator().enter();
    holder_in = true;
    wait_until([&] { return let_go.load(); }, 20s);
    queue.release(*holder);
  });
  story.wait_for("H holds the lock", [&] { return holder_in.load(); });
  queue.start(10s);
  // Both waiters are waiting: parked on the channel (generation 5), or refused twice (polling).
  queue.wait_until_waiting(pubsub ? story.capabilities().wait_point : "");
  let_go = true;
  h->join();
  queue.join();

  explain_handoff(story, "H");
  queue.say_handoffs();
  const bool woke_on_message = story.narrator().saw_push("message");
  if (pubsub && queue.a_handoff_took(kWatchdogTtl))
    story.die("a waiter slept its whole PTTL: the unlock message did not wake it");
  const bool polled = !woke_on_message;
  queue.close();  // the subscriber goes with the last lock object, before the server stops
  holder.reset();
  return story.finish(polled, polled ? text("no message was published; each waiter found the lock free on a retry "
                                            "(every {} ms)",
                                            kRetryInterval.count())
                                     : text("each release PUBLISHed on the lock's channel and the waiters woke on the "
                                            "message, before the {} ms PTTL they were told to sleep",
                                            std::chrono::milliseconds(kWatchdogTtl).count()));
}
