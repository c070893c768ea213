// A time bound counted in the time this process could run: a wait that a
// SIGSTOP interrupted (a holder-pause stops a client and its adapter together,
// docs/faults.md) does not count the stop. CLOCK_MONOTONIC runs on while a
// process is stopped, so a plain deadline would expire during a pause and the
// client would report "no answer" for a reply that comes right after SIGCONT.
//
// The waiter waits in steps of at most kAwakeStep; a step that took longer
// than twice that (the process was stopped, or not scheduled) counts as twice
// the step. Every step counts at least its own wait (a poll() that timed out
// waited that long), so a process that runs spends the bound in about its wall
// time, and one that never runs again never spends it: the run's hard deadline
// ends it (workload.h).
#pragma once

#include <chrono>

namespace locklab::harness {

inline constexpr std::chrono::milliseconds kAwakeStep{50};

class AwakeBound {
 public:
  explicit AwakeBound(std::chrono::milliseconds bound);
  // Counts the time since the last call (capped as above) and says how long
  // the next wait may last: min(what is left, kAwakeStep); 0 once the bound is
  // spent (a last look that does not block: a reply already there still counts).
  std::chrono::milliseconds next_wait();
  // The awake time counted so far, the time since the last call included.
  std::chrono::nanoseconds used() {
    (void)next_wait();
    return bound_ - left_;
  }
  bool spent() const { return left_ <= std::chrono::nanoseconds::zero(); }
  std::chrono::milliseconds bound() const { return bound_; }

 private:
  std::chrono::milliseconds bound_;
  std::chrono::nanoseconds left_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace locklab::harness
