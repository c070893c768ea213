// Redisson's guard against losing a fresh lock on failover: right after the
// acquire, WAIT until `replicas` replicas have the write (or the timeout
// passes). Fewer acknowledgements => the caller releases and reports failure.
//
// WAIT is best effort, not consensus: a failover may still promote a replica
// that had not acknowledged, and an acknowledged write can be lost if the
// promoted replica is not the one that acked. It narrows the window of
// docs/faults.md row 7; it does not close it.
#pragma once

#include <chrono>

#include "redis/connection.h"

namespace locklab {

// WAIT replicas timeout_ms: how many replicas acknowledged all writes so far on this connection.
redis::Result<long long> wait_for_replicas(redis::Connection& connection, int replicas,
                                           std::chrono::milliseconds timeout);

}  // namespace locklab
