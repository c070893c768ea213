// Test helpers for step-point stories: counting arrivals at one step point
// (any thread, any lock object) and measuring elapsed time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <string_view>

#include "step_points.h"

namespace locklab::testing {

inline long long ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

// Counts arrivals at one step point and lets the test wait for the n-th one.
class Arrivals {
 public:
  explicit Arrivals(std::string point) : point_(std::move(point)) {}
  StepHook hook() {
    return [this](std::string_view reached) {
      if (reached != point_) return;
      std::lock_guard guard(mutex_);
      ++count_;
      changed_.notify_all();
    };
  }
  bool wait_for(int n, std::chrono::milliseconds timeout = std::chrono::seconds{5}) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return count_ >= n; });
  }
  int count() {
    std::lock_guard guard(mutex_);
    return count_;
  }

 private:
  std::string point_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int count_ = 0;
};

}  // namespace locklab::testing
