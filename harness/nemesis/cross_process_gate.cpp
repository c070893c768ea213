#include "nemesis/cross_process_gate.h"

#include <chrono>
#include <thread>

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A client parked at a gate never waits longer than this, whatever the coordinator does.
constexpr auto kGateLimit = 120s;

}  // namespace

StepHook CrossProcessGate::hook(int client) const {
  if (client_ >= 0 && client != client_) return {};
  return [cells = cells_, point = point_, client](std::string_view at) {
    SharedCells& c = *cells;
    if (at != point || c[kArmed].load() == 0 || c[kSkip].load() == client + 1) return;
    std::int64_t nobody = 0;
    if (!c[kParked].compare_exchange_strong(nobody, client + 1)) return;
    const auto limit = Clock::now() + kGateLimit;
    while (c[kReleased].load() == 0 && Clock::now() < limit) std::this_thread::sleep_for(200us);
  };
}

void CrossProcessGate::arm(int skip_client) {
  (*cells_)[kSkip].store(skip_client + 1);
  (*cells_)[kArmed].store(1);
  (*cells_)[kEverArmed].store(1);
}

void CrossProcessGate::release() {
  (*cells_)[kArmed].store(0);
  (*cells_)[kReleased].store(1);
}

}  // namespace locklab::harness
