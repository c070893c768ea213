// Deterministic interleavings for tests and scenarios: park a client thread at a
// named step point until the caller lets it go, or "crash" it there.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>

#include "step_points.h"

namespace locklab {

// Thrown from a step hook: the client dies at that point without releasing
// (its lock object's destructor does not release either).
struct SimulatedCrash : std::runtime_error {
  explicit SimulatedCrash(std::string_view at) : std::runtime_error("crashed at " + std::string(at)), point(at) {}
  std::string point;  // the step point it died at
};

inline StepHook crash_at(std::string point) {
  return [point](std::string_view reached) {
    if (reached == point) throw SimulatedCrash(reached);
  };
}

// Records every step point reached, in order (to assert the race window was hit).
class StepLog {
 public:
  StepHook hook() {
    return [this](std::string_view point) {
      std::lock_guard lock(mutex_);
      points_.emplace_back(point);
    };
  }
  bool reached(std::string_view point) const {
    std::lock_guard lock(mutex_);
    for (const auto& p : points_)
      if (p == point) return true;
    return false;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> points_;
};

// Parks the first thread that reaches `point` until open(); later arrivals pass.
class StepGate {
 public:
  explicit StepGate(std::string point) : point_(std::move(point)) {}

  StepHook hook() {
    return [this](std::string_view reached) {
      if (reached != point_) return;
      std::unique_lock lock(mutex_);
      if (used_) return;
      used_ = true;
      arrived_ = true;
      changed_.notify_all();
      changed_.wait(lock, [this] { return opened_; });
    };
  }

  // True once a thread is parked at the point (false after the timeout).
  bool wait_arrival(std::chrono::milliseconds timeout = std::chrono::seconds{10}) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [this] { return arrived_; });
  }

  void open() {
    std::lock_guard lock(mutex_);
    opened_ = true;
    changed_.notify_all();
  }

  ~StepGate() { open(); }

 private:
  std::string point_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool used_ = false, arrived_ = false, opened_ = false;
};

}  // namespace locklab
