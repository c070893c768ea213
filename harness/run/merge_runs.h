// `locklab merge`: the hosts' run documents of one multi-host run
// (host_coordinator.h) combined into one locklab.merged/1 document.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "redis/result.h"

namespace locklab::harness {

// One combined document from the hosts' run documents of one run id. Sums
// acquisitions and confirmed increments; the oracle's figures are the maximum
// any host read (every host reads after the end barrier). The verdict is the
// worst of: each host's verdict, in the order error > violation > deadlock >
// safe (a run that could not measure overrules its findings); violation when
// the oracle counted violating pairs or the shared counter is not exact (final
// vs the sum of confirmed increments, up to the unconfirmed writes); error
// when the documents are not exactly the run's hosts (too few, or one host
// twice), or when no host could read the final counter. A usage Error when the
// documents do not belong to one multi-host run (different run ids or locks,
// not --run-id runs).
Result<nlohmann::json> merge_runs(const std::vector<nlohmann::json>& runs);

}  // namespace locklab::harness
