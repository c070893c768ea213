// Conditions, not sleeps: wait until a predicate holds, polling it, with a bound.
// Faults and tests wait for observable states (a held byte, a link up, a key
// gone) so a race replays on every run, however loaded the machine is.
#pragma once

#include <chrono>
#include <thread>

namespace locklab::harness {

// True as soon as `condition()` is true; false if it is still false at the deadline
// (checked one last time then, so a slow machine never loses a late success).
template <class Condition>
bool poll_until(Condition&& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds interval = std::chrono::milliseconds{5}) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(interval);
  }
  return condition();
}

}  // namespace locklab::harness
