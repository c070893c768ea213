#include "run/oracle_side.h"

#include <string>

#include "run/run_servers.h"
#include "servers/server_stats.h"

namespace locklab::harness {

Result<std::optional<OracleSide>> provide_oracle(const RunOptions& options) {
  if (!options.oracle && !options.own_oracle) return std::optional<OracleSide>{};
  OracleSide side;
  side.config.host = host_label();
  if (options.own_oracle) {
    auto server = RedisServer::start();
    if (!server) return Error{ErrorKind::io, "cannot start the oracle's redis-server: " + server.error().message};
    side.own = std::move(server).value();
    side.config.server = coordinator_options(side.own->endpoint());
    side.config.run_id = "own:" + side.config.host + ":" + std::to_string(monotonic_ns());
  } else {
    side.config.server = coordinator_options(*options.oracle);
    side.config.run_id = options.run_id;
  }
  side.config.server.counted = false;  // the oracle's traffic is not the lock's cost
  if (auto ok = reachable(side.config.server); !ok) return Error{ErrorKind::io, "oracle: " + ok.error().message};
  return std::optional<OracleSide>{std::move(side)};
}

// With an oracle, join the run on it (host_coordinator.h): barriers, and its reading
// at the end. No oracle: no coordinator.
Result<std::optional<HostCoordinator>> join_hosts(const RunOptions& options, const std::optional<OracleSide>& oracle) {
  if (!oracle) return std::optional<HostCoordinator>{};
  auto joined = HostCoordinator::join(oracle->config, options.hosts);
  if (!joined) return joined.error();
  return std::optional<HostCoordinator>{std::move(joined).value()};
}

}  // namespace locklab::harness
