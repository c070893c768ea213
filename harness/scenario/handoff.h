// Waiters queued behind one holder, and the handoffs between them (pubsub_wakeup):
// each waiter is a named actor with its own lock and step log; the queue keeps
// when each started waiting, when it got the lock, and when the release it got
// in after happened. Every release goes through release(), so that "when the
// lock was freed" is known to whoever gets it next.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "lock.h"

#include "scenario/scenario.h"
#include "scenario/step_gate.h"

namespace locklab::harness {

struct Waiter {
  std::string name;
  std::unique_ptr<DistributedLock> lock;
  StepLog log;
  int round_trips = 0;  // until it held the lock
  double started_ms = 0, acquired_ms = 0, freed_ms = 0;  // freed: when the lock it got was released
};

class WaiterQueue {
 public:
  explicit WaiterQueue(Scenario& story) : story_(story) {}
  // A waiter named `name` with a lock of its own on `config` (its step points logged).
  void add(std::string name, LockConfig config);
  // The calling actor leaves its critical section and releases `lock`: "releases => X".
  void release(DistributedLock& lock);
  // Every waiter, as an actor, waits up to `patience` for the lock, enters, and releases it.
  void start(std::chrono::milliseconds patience);
  // Until every waiter waits: asleep at `wait_point` (a lock that notifies its waiters), or
  // refused twice (one that polls: `wait_point` empty).
  void wait_until_waiting(std::string_view wait_point);
  void join();
  // One line per waiter: its round trips, how long it waited, and its handoff (release -> acquire).
  void say_handoffs();
  // True when a waiter got in no sooner than `bound` after the release it waited for.
  bool a_handoff_took(std::chrono::milliseconds bound) const;
  // The waiters' locks go (a subscriber with the last of them), before the server stops.
  void close() { waiters_.clear(); }

 private:
  Scenario& story_;
  std::vector<std::unique_ptr<Waiter>> waiters_;
  std::vector<std::unique_ptr<Actor>> running_;
  std::mutex release_mutex_;
  double last_release_ms_ = 0;
};

}  // namespace locklab::harness
