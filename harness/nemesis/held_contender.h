// The faults that take the key from a parked holder (failover, node crash,
// clock jump) also hold the contender, so that one story happens on every run:
// the contender reads the protected counter, the old holder writes, then the
// contender writes. Without it the two writes' order was the luck of two
// equal holds a millisecond apart (fenced x failover read me-violation or
// safe from run to run).
//
// hold_contender() arms a second gate at locklab:cs-read (after an accepted
// read, before the write) for every client but the holder. The holder is let
// go only once a contender parked there (overtaken(): its read is in), and
// let_contender_go() lets the contender go once the holder's parked section
// is over (it wrote, or died), or after a patience. A contender that reads
// after the holder left is not held.
#pragma once

#include <chrono>
#include <cstdint>

#include "nemesis/topology_fault.h"

namespace locklab::harness {

class HeldContenderFault : public GatedFault {
 public:
  HeldContenderFault(FaultSpec spec, std::string point, int client)
      : GatedFault(std::move(spec), std::move(point), client), reader_gate_(std::string(kCsRead), -1) {}
  StepHook client_step_hook(int client) override;
  bool overtaken(const NemesisContext& context, int holder) const override;

 protected:
  // Arms the contender's gate for everyone but `holder`, whose section is open now.
  void hold_contender(const NemesisContext& context, int holder);
  // Call on every tick: lets the contender go once `holder`'s section is over,
  // or `patience` after the holder's gate let go.
  void let_contender_go(const NemesisContext& context, int holder, std::chrono::milliseconds patience);
  void let_all_go() override {
    GatedFault::let_all_go();
    reader_gate_.release();
  }

 private:
  bool holder_left(const NemesisContext& context, int holder) const;

  CrossProcessGate reader_gate_;     // where the contender parks after its read
  std::int64_t holder_records_ = 0;  // the holder's records as its parked section began
  std::chrono::steady_clock::time_point holder_let_go_{};
  bool reader_noted_ = false;
};

}  // namespace locklab::harness
