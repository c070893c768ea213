// How a matrix cell's fault specs reach measure(): the one seam between the
// matrix and the nemesis (harness/faults.h once merged). Kept apart so the
// matrix itself never depends on how a fault is built.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "matrix.h"
#include "result.h"
#include "run.h"

namespace locklab::harness {

// One run with these fault specs applied (in order).
Result<nlohmann::json> measure_with_faults(const RunOptions& options, const std::vector<std::string>& specs);

// Why this build cannot inject the column's faults (a fault name it does not
// know), or nullopt when it can.
std::optional<std::string> column_not_injectable(const FaultColumn& column);

}  // namespace locklab::harness
