#include "support/conditions.h"

#include <thread>

namespace locklab::harness {

bool wait_until(const Condition& condition, std::chrono::milliseconds timeout, std::chrono::milliseconds every) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
}

}  // namespace locklab::harness
