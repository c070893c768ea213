// The clock-skew fault: one client's wall clock (LockConfig::clock) is off by
// MS, and its adapter's too, through the clock shim (servers/clock_shim/).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nemesis/fault.h"
#include "nemesis/fault_record.h"
#include "nemesis/fault_spec.h"
#include "support/process_control.h"

namespace locklab::harness {

// clock-skew:client=N:offset=MS
// The skewed client is held stopped from the barrier until another client
// holds the lock (process mode), so it always meets a live lock with its wrong
// clock: the steal, where the generation allows one, happens on every run, not
// only when the scheduler lets the other client win first. Released after
// 10 x ttl at the latest (one client, or nobody else gets in).
//
// A generation reads the client's LockConfig::clock; an adapter (a library in
// another process) reads its own process's CLOCK_REALTIME. So the skewed
// client's process also gets the clock shim in LD_PRELOAD with an offset file
// of this fault's own (client_environment): the adapter it starts inherits
// both, and its Date.now() or time.time() runs MS off too.
class ClockSkewFault final : public Fault {
 public:
  ClockSkewFault(FaultSpec spec, int client, std::chrono::milliseconds offset);
  ~ClockSkewFault() override;
  ClockSkewFault(const ClockSkewFault&) = delete;
  ClockSkewFault& operator=(const ClockSkewFault&) = delete;
  std::string name() const override { return "clock-skew"; }
  FaultNeeds needs() const override;
  std::shared_ptr<const WallClock> client_clock(int client) override;
  std::vector<std::string> client_environment(int client) override;
  void before_run(NemesisContext& context) override;
  void holder_entered(NemesisContext& context, int holder) override;
  void tick(NemesisContext& context) override;
  void after_run(NemesisContext& context) override;
  std::chrono::milliseconds allowance(std::chrono::milliseconds ttl) const override { return 10 * ttl; }
  nlohmann::json record() const override;
  Bite bite(const BiteEvidence& evidence) const override;
  // The skewed client made an acquire attempt with its skewed clock (whether
  // the lock reads that clock is the generation's matter, not the fault's);
  // and when it runs an adapter, that adapter runs under the shim.
  bool acted() const override { return skewed_attempts_ > 0 && adapter_clock_ != AdapterClock::not_skewed; }
  std::string why_not_acted() const override;

 private:
  enum class AdapterClock { none, skewed, not_skewed };  // the skewed client's adapter, if it has one
  void start_skewed_client(const std::string& why);
  void check_adapter_clock(pid_t client_pid);
  std::string offset_file();  // made on first use; "" when it could not be written

  FaultSpec spec_;
  int client_;
  std::chrono::milliseconds offset_;
  std::optional<PausedProcess> held_back_;
  std::chrono::steady_clock::time_point release_by_{};
  std::int64_t skewed_attempts_ = 0;  // the skewed client's acquire attempts, read in after_run
  std::int64_t go_ns_ = 0;
  std::vector<AppliedEvent> events_;
  std::string offset_dir_;  // a temporary folder of its own, removed with the fault
  std::string offset_problem_;
  AdapterClock adapter_clock_ = AdapterClock::none;
  std::string adapter_note_;  // what check_adapter_clock found
};

}  // namespace locklab::harness
