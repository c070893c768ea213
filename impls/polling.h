// The retry loop every polling generation shares: try, and while the lock is
// busy sleep retry_interval and try again, until the wait runs out.
//
// Retry intervals. Our default is short, for throughput; the seeds' own values
// are named constants so a faithful replay can pass them in
// LockConfig::retry_interval.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "lock.h"

namespace locklab {

// Used when LockConfig::retry_interval is unset.
inline constexpr std::chrono::milliseconds kDefaultRetryInterval{10};
// Seed 004 §4: `Thread.sleep(1000); testLock();` after a failed SETNX.
inline constexpr std::chrono::milliseconds kSeed004RetryInterval{1000};
// Seed 003: `DEFAULT_ACQUIRY_RESOLUTION_MILLIS = 100` between SETNX/GETSET rounds.
inline constexpr std::chrono::milliseconds kSeed003RetryInterval{100};

inline std::chrono::milliseconds retry_interval_of(const LockConfig& config) {
  return config.retry_interval.value_or(kDefaultRetryInterval);
}

// Calls attempt() until it returns an outcome; nullopt means "someone else holds
// the lock, try again". Attempts once more when the wait runs out, so wait 0 is
// exactly one attempt and a bounded wait never ends early. Measured on the
// steady clock, never the (injectable, skewable) wall clock.
template <class Attempt>
Acquire poll_until_acquired(std::chrono::milliseconds wait, std::chrono::milliseconds interval,
                            Attempt&& attempt) {
  using std::chrono::steady_clock;
  const auto deadline = steady_clock::now() + std::max(wait, std::chrono::milliseconds{0});
  for (;;) {
    if (std::optional<Acquire> outcome = attempt()) return *outcome;
    const auto left = deadline - steady_clock::now();
    if (left <= steady_clock::duration::zero()) return Acquire::timed_out;
    std::this_thread::sleep_for(std::min<steady_clock::duration>(interval, left));
  }
}

}  // namespace locklab
