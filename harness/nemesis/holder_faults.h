// The faults that act on the lock holder's process (docs/faults.md, "Process and client faults"):
//   holder-crash  the holder dies at a step point, like SIGKILL: its whole process group at
//                 once (exit_with_group: watchdog, adapter and all), no release, no destructors
//   holder-pause  the holder's whole process is SIGSTOPped by the coordinator, then SIGCONTed
//                 after MS or once a condition holds (the GC pause)
//   slow-holder   one critical section lasts MS, the process alive (its watchdog keeps renewing)
//
// They share ClientParking (nemesis/client_parking.h) and SharedCells
// (nemesis/shared_cells.h) with the step actions and the protocol faults;
// clock-skew has a file of its own (nemesis/clock_skew_fault.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nemesis/client_parking.h"
#include "nemesis/fault.h"
#include "nemesis/fault_record.h"
#include "nemesis/fault_spec.h"
#include "nemesis/shared_cells.h"

namespace locklab::harness {

// holder-crash:at=POINT:client=N:times=K
class CrashHolderFault final : public Fault {
 public:
  CrashHolderFault(FaultSpec spec, std::string at, int client, int times);
  std::string name() const override { return "holder-crash"; }
  FaultNeeds needs() const override;
  StepHook client_step_hook(int client) override;
  void tick(NemesisContext& context) override;
  void after_run(NemesisContext& context) override;
  nlohmann::json record() const override;
  bool acted() const override { return !events_.empty(); }  // a client was killed
  std::string why_not_acted() const override;
  Bite bite(const BiteEvidence& evidence) const override;

 private:
  FaultSpec spec_;
  std::string at_;
  int client_, times_;
  std::shared_ptr<SharedCells> cells_;  // [0]: claims; [1 + client]: when it died
  // Outside the section (the SETNX/EXPIRE gap): per dead client, the key it
  // left with no TTL ("" none), read as soon as the coordinator saw it die.
  std::map<int, std::string> keys_without_ttl_;
  std::vector<AppliedEvent> events_;
  std::int64_t go_ns_ = 0;
};

// holder-pause:(ms=MS|until=expired|other-acquired[:max=MS]):at=POINT:client=N
class PauseHolderFault final : public Fault {
 public:
  PauseHolderFault(FaultSpec spec, std::string at, int client, PauseRule rule);
  std::string name() const override { return "holder-pause"; }
  FaultNeeds needs() const override;
  StepHook client_step_hook(int client) override;
  void tick(NemesisContext& context) override { parking_->tick(context); }
  void after_run(NemesisContext& context) override;
  nlohmann::json record() const override;
  bool acted() const override { return parking_->exercised() > 0; }  // a process was stopped, and it counted
  std::string why_not_acted() const override;
  std::chrono::milliseconds allowance(std::chrono::milliseconds ttl) const override;
  Bite bite(const BiteEvidence& evidence) const override { return pause_bite(evidence, parking_->spans()); }

 private:
  FaultSpec spec_;
  std::string at_;
  int client_;
  std::shared_ptr<SharedCells> claimed_;  // [0]: the one pause was taken
  std::shared_ptr<ClientParking> parking_;
  std::int64_t go_ns_ = 0;
};

// slow-holder:ms=MS:client=N
class SlowHolderFault final : public Fault {
 public:
  SlowHolderFault(FaultSpec spec, int client, std::chrono::milliseconds ms);
  std::string name() const override { return "slow-holder"; }
  FaultNeeds needs() const override;
  StepHook client_step_hook(int client) override;
  void after_run(NemesisContext& context) override;
  nlohmann::json record() const override;
  bool acted() const override { return !events_.empty(); }  // a section was made slow
  std::string why_not_acted() const override;
  std::chrono::milliseconds allowance(std::chrono::milliseconds) const override { return ms_; }
  Bite bite(const BiteEvidence& evidence) const override;

 private:
  FaultSpec spec_;
  int client_;
  std::chrono::milliseconds ms_;
  std::shared_ptr<SharedCells> cells_;  // [0]: claimed by client+1; [1]: when it began
  std::vector<AppliedEvent> events_;
  std::int64_t go_ns_ = 0;
};

}  // namespace locklab::harness
