// The oracle Redis of a run with --oracle (its own or a shared one) and the
// run joining the other hosts on it (host_coordinator.h). measure() (run.cpp)
// provides it before the clients start; host_judgment.h judges what it read.
#pragma once

#include <memory>
#include <optional>

#include "redis/result.h"

#include "run/host_coordinator.h"
#include "run/options.h"
#include "servers/redis_server.h"

namespace locklab::harness {

// The oracle Redis of the run: the shared one (--oracle HOST:PORT, --run-id),
// or one the run starts for itself (bare --oracle): a server of its own, never
// behind a proxy, never faulted, with a fresh internal run id for its keys.
struct OracleSide {
  std::unique_ptr<RedisServer> own;  // the self-started oracle, stopped with the run
  OracleConfig config;
};

// None without --oracle; an io Error when the oracle does not answer.
Result<std::optional<OracleSide>> provide_oracle(const RunOptions& options);
Result<std::optional<HostCoordinator>> join_hosts(const RunOptions& options, const std::optional<OracleSide>& oracle);

}  // namespace locklab::harness
