// Redisson's guard against losing a fresh lock on failover (its syncedEval):
// right after acquiring, `WAIT <replicas> <timeout_ms>` on the same connection
// (WAIT counts the acknowledgements of this client's own writes). Fewer
// acknowledgements than asked => the caller releases and reports failure.
// Enabled by LockConfig::wait_replicas > 0 (generations 4 and 5).
//
// WAIT is best effort, not consensus: a failover may still promote a replica
// that had not acknowledged. It narrows the window of the failover fault
// (fault-matrix row 7); it does not close it. And it costs
// liveness: with the replica down, nobody can acquire at all.
#pragma once

#include <optional>
#include <string>

#include "redis/connection.h"

#include "lock.h"

namespace locklab {

redis::Args wait_replicas_command(const LockConfig& config);

// nullopt when at least config.wait_replicas replicas acknowledged; otherwise why not.
std::optional<std::string> replication_shortfall(const Result<redis::Reply>& wait_reply,
                                                 const LockConfig& config);

}  // namespace locklab
