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
// (server_order.h), not in the order their replies happen to be printed.
#include <algorithm>
#include <atomic>
#include <mutex>

#include "scenario/claims.h"
#include "scenario/scenario.h"
#include "scenario/server_order.h"
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

using nlohmann::json;

std::string effect_of(const json& step) { return step.contains("lock") ? step["lock"].value("effect", "") : ""; }

// One refusal after the release, against the acquire that won the key.
void explain_refusal(Scenario& story, const json& steps, const json& refused, const json& won) {
  const int r = refused["step"].get<int>(), w = won["step"].get<int>();
  const std::string loser = refused["who"], winner = won["who"];
  switch (server_order(steps, story.server_log(), w, r)) {
    case ServerOrder::first_ran_first:
      if (r < w)
        return story.say_claiming({claim::before(claim::step(w), claim::step(r))},
                                  "{0}'s acquire (step {1}) was refused although its reply is printed before {2}'s "
                                  "(step {3}): the server ran {2}'s first. Its log shows H's release freeing the key, "
                                  "then {2}'s acquire taking it; {0}'s was sent after the release, and a refusal "
                                  "means the key was there again",
                                  loser, r, winner, w);
      return story.say_claiming({claim::before(claim::step(w), claim::step(r))},
                                "{0}'s acquire (step {1}) was refused: the server had run {2}'s (step {3}) first, and "
                                "the key was {2}'s",
                                loser, r, winner, w);
    case ServerOrder::then_ran_first:
      return story.say_claiming({claim::before(claim::step(r), claim::step(w))},
                                "{0}'s acquire (step {1}) ran before {2}'s (step {3}) and was refused", loser, r,
                                winner, w);
    case ServerOrder::unknown:
      return story.say_claiming({claim::unordered(claim::step(w), claim::step(r))},
                                "{0}'s refused acquire (step {1}) and {2}'s acquire (step {3}) cannot be ordered from "
                                "what was recorded: their replies crossed, and the server's log does not place them",
                                loser, r, winner, w);
  }
}

// Each waiter's first refusal sent after H's release: the acquire that won the key was run first (or not known).
void explain_handoff(Scenario& story) {
  const json steps = story.narrator().steps();
  double released_at = -1;  // H's release came back then
  for (const auto& step : steps)
    if (step["who"] == "H" && step["kind"] == "command") released_at = step["t_ms"].get<double>();
  const json* won = nullptr;
  for (const auto& step : steps)
    if (!won && step.value("sent_ms", -1.0) >= released_at && effect_of(step).rfind("acquired", 0) == 0) won = &step;
  if (won == nullptr) return;
  std::vector<std::string> told;
  for (const auto& step : steps) {
    const std::string who = step["who"];
    if (step.value("sent_ms", -1.0) < released_at || effect_of(step).rfind("refused", 0) != 0) continue;
    if (who == (*won)["who"] || std::find(told.begin(), told.end(), who) != told.end()) continue;
    told.push_back(who);
    explain_refusal(story, steps, step, *won);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("pubsub_wakeup"), argc, argv);
  const bool pubsub = story.capabilities().notifies_waiters;
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
    if (holder->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "H");
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
      if (w->lock->try_acquire(10s) != Acquire::acquired) story.die("{} never got the lock", w->name);
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
      story.wait_for(text("{} sleeps on the unlock channel", w->name),
                     [&story, w] { return w->log.reached(story.capabilities().wait_point); });
    else
      story.wait_for(text("{} was refused twice", w->name),
                     [&, w] { return story.narrator().round_trips(w->name) >= 2; });
  }
  let_go = true;
  h->join();
  for (auto& actor : running) actor->join();

  explain_handoff(story);
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
