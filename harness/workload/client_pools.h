// Workload-internal (workload.cpp's, not for other components): the two client modes of a run.
// Each starts the clients (client_loop.h), opens the start barrier, watches them with the
// nemesis until the run ends, and reaps them; client_pools.cpp says how.
#pragma once

#include <functional>

#include "history/history.h"
#include "nemesis/nemesis.h"
#include "workload/workload.h"

namespace locklab::harness {

// One forked process per client (ClientMode::process).
Result<WorkloadOutcome> run_processes(const WorkloadConfig& config, const SharedHistory& history, Nemesis& nemesis,
                                      NemesisContext& context, const std::function<void()>& at_barrier);

// One thread per client, in this process (ClientMode::thread).
Result<WorkloadOutcome> run_threads(const WorkloadConfig& config, const SharedHistory& history, Nemesis& nemesis,
                                    NemesisContext& context, const std::function<void()>& at_barrier);

}  // namespace locklab::harness
