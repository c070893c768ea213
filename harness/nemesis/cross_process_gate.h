// A step point where a client parks for a topology fault (nemesis/node_faults.h):
// the holder stays inside, alive -- a watchdog keeps running -- while the
// coordinator changes the world around it, always within a bound.
// Across processes: a forked client parks on cells shared across fork(). Not
// scenario/step_gate.h's StepGate, which parks the threads of one process for
// a story and a test.
#pragma once

#include <memory>
#include <string>

#include "step_points.h"

#include "nemesis/shared_cells.h"

namespace locklab::harness {

// A client that reaches `point` (the first one, or only `client`) waits there
// until the coordinator lets it go. One shot: once a client parked, the gate
// lets every later one through. The cells live in memory shared across
// fork(), so a client process parks and the coordinator sees it.
class CrossProcessGate {
 public:
  CrossProcessGate(std::string point, int client)
      : point_(std::move(point)), client_(client), cells_(std::make_shared<SharedCells>(5)) {}

  StepHook hook(int client) const;
  void arm(int skip_client = -1);
  int parked() const { return static_cast<int>((*cells_)[kParked].load()) - 1; }
  bool released() const { return (*cells_)[kReleased].load() != 0; }
  bool ever_armed() const { return (*cells_)[kEverArmed].load() != 0; }
  const std::string& point() const { return point_; }
  void release();

 private:
  enum Cell : std::size_t { kArmed = 0, kParked = 1, kReleased = 2, kSkip = 3, kEverArmed = 4 };
  std::string point_;
  int client_;
  std::shared_ptr<SharedCells> cells_;
};

}  // namespace locklab::harness
