// The section oracle on the oracle Redis (issue 12 item 5): the workload's
// SectionOracles (workload/section_oracle.h) as Lua scripts on a Redis of its
// own, never subject to faults, shared by every host of a run
// (host_coordinator.h). It needs no synchronised clocks: the only order it
// uses is the oracle's own `seq` counter, which its scripts INCR atomically.
// Occupancy is per holder: the hash `holders` maps each client (host
// label/client index) to its open section's id. Entering a section gets an id
// (INCR `sections`), stamps it with `seq`, pushes one pair "other this" onto
// `pairs` for every holder present, and adds this client to `holders`;
// leaving removes it. A client that dies inside never leaves: the coordinator
// that reaps it removes its entry (client_died), as it ends the client's
// section in the history. Each section's read start and write end are `seq`
// stamps in section:<id>, with its token and whether the resource refused it;
// at the end HostCoordinator::reading() judges the pairs by classify_overlap
// (checker.h) on those stamps.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "redis/connection.h"
#include "redis/result.h"

#include "workload/section_oracle.h"

namespace locklab::harness {

struct OracleConfig {
  redis::ConnectionOptions server;  // uncounted (ConnectionOptions::counted): not the lock's traffic
  std::string run_id;
  std::string host;  // this host's label (host_label()), taken in the coordinator before the fork
};

// The keys of one run on the oracle: locklab:run:<run id>:<name>.
std::string oracle_key(const std::string& run_id, const std::string& name);

// The oracle Redis as the workload's SectionOracles: a client's connection
// and the coordinator's removal of a dead client's holder entry.
class RedisSectionOracles : public SectionOracles {
 public:
  explicit RedisSectionOracles(OracleConfig config) : config_(std::move(config)) {}
  Result<std::unique_ptr<SectionOracle>> connect(int client) const override;
  Status client_died(int client) override;

 private:
  OracleConfig config_;
  std::optional<redis::Connection> reaper_;  // connected on first use: never inherited by a forked client
};

}  // namespace locklab::harness
