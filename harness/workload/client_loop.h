// Workload-internal (client_pools.cpp's, not for other components): one client of a run, the
// same in a forked process and in a thread. It builds its lock, counter and section oracle,
// waits at the start barrier, then loops acquire (bounded wait) -> critical section ->
// release until the run stops it, and leaves its counts and its last error in its slot of
// the SharedHistory. How clients are started, watched and reaped is client_pools.cpp's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lock.h"

#include "history/history.h"
#include "resource/counter_resource.h"
#include "workload/section_oracle.h"
#include "workload/workload.h"

namespace locklab::harness {

class ClientLoop {
 public:
  ClientLoop(const WorkloadConfig& config, const SharedHistory& history, int index, StepHook hook,
             std::shared_ptr<const WallClock> clock);

  // Returns the process exit code for process mode.
  int run(bool report_traffic);

 private:
  bool keep_going();
  // A lock that broke (an adapter that misbehaved) answers every later call
  // with the same error: the client stops and says why (its exit status makes
  // it a failed client).
  bool lock_broke() const { return !lock_->broken().empty(); }
  int end_lock();
  void loop();
  bool critical_section(std::int64_t invoke);
  void crash_if_adapter_died();
  [[noreturn]] void crash_with_adapter();
  bool lease_lost_under_us(Release released, std::uint64_t leases_lost_before) const;
  CsWrite increment(std::optional<std::uint64_t> token, CsRecord& record);
  void observe_read(std::optional<std::uint64_t> token);
  void observe_write(bool refused);
  void observe(const Status& status);
  CsWrite counter_failed(const std::string& why);
  void note_error();
  void finish(const redis::Traffic& before, bool report_traffic);

  const WorkloadConfig& config_;
  const SharedHistory& history_;
  int index_;
  ClientSlot& slot_;
  StepHook hook_;
  std::shared_ptr<const WallClock> clock_;
  std::unique_ptr<DistributedLock> lock_;
  std::optional<CounterResource> counter_;
  std::unique_ptr<SectionOracle> oracle_;
  std::int64_t want_ns_ = 0;
};

}  // namespace locklab::harness
