// Wall-clock time behind an interface, so generation 2 (which trusts client
// clocks) can be shown failing under skew. Measurements never use this: they
// use std::chrono::steady_clock.
#pragma once

#include <chrono>
#include <memory>

namespace locklab {

class WallClock {
 public:
  virtual ~WallClock() = default;
  virtual std::chrono::system_clock::time_point now() const = 0;

  std::chrono::milliseconds now_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now().time_since_epoch());
  }
};

// The real clock, optionally off by a fixed skew (positive = ahead).
class SkewedClock final : public WallClock {
 public:
  explicit SkewedClock(std::chrono::milliseconds skew = {}) : skew_(skew) {}
  std::chrono::system_clock::time_point now() const override {
    return std::chrono::system_clock::now() + skew_;
  }

 private:
  std::chrono::milliseconds skew_;
};

inline std::shared_ptr<const WallClock> system_wall_clock() {
  static const auto clock = std::make_shared<const SkewedClock>();
  return clock;
}

}  // namespace locklab
