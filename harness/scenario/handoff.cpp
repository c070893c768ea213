#include "scenario/handoff.h"

#include <algorithm>

namespace locklab::harness {

void WaiterQueue::add(std::string name, LockConfig config) {
  auto waiter = std::make_unique<Waiter>();
  waiter->name = std::move(name);
  config.step = waiter->log.hook();
  waiter->lock = story_.make_lock(config);
  waiters_.push_back(std::move(waiter));
}

void WaiterQueue::release(DistributedLock& lock) {
  story_.narrator().leave();
  const Release outcome = lock.release();
  std::lock_guard guard(release_mutex_);
  last_release_ms_ = story_.narrator().now_ms();
  story_.say("releases => {}", translated(to_string(outcome)));
}

void WaiterQueue::start(std::chrono::milliseconds patience) {
  for (auto& waiter : waiters_) {
    Waiter* w = waiter.get();
    running_.push_back(story_.actor(w->name, [this, w, patience] {
      w->started_ms = story_.narrator().now_ms();
      if (w->lock->try_acquire(patience) != Acquire::acquired) story_.die("{} never got the lock", w->name);
      w->acquired_ms = story_.narrator().now_ms();
      w->round_trips = story_.narrator().round_trips(w->name);
      {
        std::lock_guard guard(release_mutex_);
        w->freed_ms = last_release_ms_;
      }
      story_.narrator().enter();
      release(*w->lock);
    }));
  }
}

void WaiterQueue::wait_until_waiting(std::string_view wait_point) {
  for (auto& waiter : waiters_) {
    Waiter* w = waiter.get();
    if (!wait_point.empty())
      story_.wait_for(text("{} sleeps on the unlock channel", w->name),
                      [w, wait_point] { return w->log.reached(wait_point); });
    else
      story_.wait_for(text("{} was refused twice", w->name),
                      [this, w] { return story_.narrator().round_trips(w->name) >= 2; });
  }
}

void WaiterQueue::join() {
  for (auto& actor : running_) actor->join();
}

void WaiterQueue::say_handoffs() {
  for (const auto& w : waiters_)
    story_.say("{}: {} round trips to acquire, waited {} ms, handoff {} ms after the release it waited for", w->name,
               w->round_trips, fixed(w->acquired_ms - w->started_ms, 1), fixed(w->acquired_ms - w->freed_ms, 1));
}

bool WaiterQueue::a_handoff_took(std::chrono::milliseconds bound) const {
  return std::any_of(waiters_.begin(), waiters_.end(), [bound](const auto& w) {
    return w->acquired_ms - w->freed_ms >= static_cast<double>(bound.count());
  });
}

}  // namespace locklab::harness
