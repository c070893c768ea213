// One measured run: servers up, workload, checker, metrics, one JSON document.
// Called by the CLI (`locklab run`), the sweeps (compare, the fault matrix,
// scale, fleets) and the benchmarks.
#pragma once

#include <nlohmann/json.hpp>

#include "redis/result.h"

#include "nemesis/nemesis.h"
#include "run/options.h"

namespace locklab::harness {

// The run's document. ErrorKind::usage = bad options (exit 2); anything else =
// the run could not happen (exit 1). A run that happened but could not judge
// (every attempt failed, clients had to be killed) returns a document whose
// verdict is "error".
Result<nlohmann::json> measure(const RunOptions& options, Nemesis* nemesis = nullptr);

}  // namespace locklab::harness
