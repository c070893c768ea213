// The workload's entry (workload.h): which client mode runs the clients (client_pools.h), and
// the hard deadline past which the coordinator kills them.
#include "workload/workload.h"

#include "workload/client_pools.h"

namespace locklab::harness {

using namespace std::chrono_literals;

std::chrono::milliseconds hard_deadline(const WorkloadConfig& config) {
  using std::chrono::milliseconds;
  const milliseconds per_attempt = config.wait + config.hold + 2000ms;
  if (!config.ops) return config.duration + per_attempt + config.fault_allowance + 10s;
  // Every attempt is bounded by wait (+ hold); clients work in parallel.
  const auto attempts_each = (*config.ops + config.clients - 1) / config.clients;
  return milliseconds{attempts_each * per_attempt.count()} + config.fault_allowance + 10s;
}

Result<WorkloadOutcome> run_workload(const WorkloadConfig& config, const SharedHistory& history,
                                            Nemesis& nemesis, NemesisContext& context,
                                            const std::function<void()>& at_barrier) {
  if (config.clients != history.clients())
    return Error{ErrorKind::usage, "history sized for a different number of clients"};
  return config.mode == ClientMode::process ? run_processes(config, history, nemesis, context, at_barrier)
                                            : run_threads(config, history, nemesis, context, at_barrier);
}

}  // namespace locklab::harness
