// Step points: named race windows inside a lock's algorithm.
//
// Every generation calls step("after-get-before-del") etc. at the exact place
// where the seeds' races happen. With no hook installed this is a no-op. Tests
// and the harness install a hook that pauses (blocks until told), delays,
// or crashes the client at that point, so a race replays on every run rather
// than by luck. The names are listed in each generation's header.
#pragma once

#include <functional>
#include <string_view>

namespace locklab {

using StepHook = std::function<void(std::string_view point)>;

class StepPoints {
 public:
  StepPoints() = default;
  explicit StepPoints(StepHook hook) : hook_(std::move(hook)) {}

  void operator()(std::string_view point) const {
    if (hook_) hook_(point);
  }

 private:
  StepHook hook_;
};

}  // namespace locklab
