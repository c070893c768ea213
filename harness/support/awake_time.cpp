#include "support/awake_time.h"

#include <algorithm>

namespace locklab::harness {

AwakeBound::AwakeBound(std::chrono::milliseconds bound)
    : bound_(bound), left_(bound), last_(std::chrono::steady_clock::now()) {}

std::chrono::milliseconds AwakeBound::next_wait() {
  const auto now = std::chrono::steady_clock::now();
  left_ -= std::min<std::chrono::nanoseconds>(now - last_, 2 * kAwakeStep);
  last_ = now;
  if (spent()) return std::chrono::milliseconds::zero();
  // Rounded up: a wait of 0 is reserved for the last look.
  return std::min(std::chrono::ceil<std::chrono::milliseconds>(left_), kAwakeStep);
}

}  // namespace locklab::harness
