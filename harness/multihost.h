// Runs spread over several client hosts (issue 12 item 5): `locklab run` on
// each machine with the same --run-id, --hosts N and --oracle HOST:PORT.
//
// The oracle is a Redis of its own, never subject to faults. It serves
//   - the start barrier: each host INCRs `ready` and waits until N are ready;
//     the first host to arrive resets the shared lock server's key and counter
//     (once for the whole run) before anyone is ready;
//   - the cross-host occupancy oracle, which needs no synchronized clocks: each
//     critical section INCRs `occupancy` on entry (a value above 1 is two
//     holders at once, on whatever hosts) and DECRs it on exit; the high-water
//     mark and the number of entries that saw > 1 stay on the oracle;
//   - the end barrier: each host waits until all N are done, so every host
//     reads the same final counter.
// Keys: locklab:run:<run id>:{arrived,reset,ready,done,occupancy,max,overlaps}.
// Use a fresh run id per run.
//
// `locklab merge` combines the hosts' documents (merge_runs below).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "redis/connection.h"
#include "redis/script.h"
#include "result.h"

namespace locklab::harness {

struct OracleConfig {
  redis::ConnectionOptions server;
  std::string run_id;
};

// The keys of one run on the oracle.
std::string oracle_key(const std::string& run_id, const std::string& name);

// One client's connection to the occupancy oracle (one per client: its
// commands must not interleave with another client's).
class OccupancyOracle {
 public:
  static Result<OccupancyOracle> connect(const OracleConfig& config);
  // INCR occupancy (and the high-water mark); returns the occupancy seen.
  Result<long long> enter();
  Status leave();  // DECR occupancy

 private:
  OccupancyOracle(redis::Connection connection, std::string run_id);
  redis::Connection connection_;
  std::string run_id_;
  redis::Script enter_script_;
};

// What the oracle saw over the whole run (every host's sections).
struct OracleReading {
  long long max_occupancy = 0;
  long long overlapped_entries = 0;  // entries that found another holder inside
};

// One host's part in the run's coordination.
class HostCoordinator {
 public:
  static Result<HostCoordinator> join(const OracleConfig& config, int hosts);

  // Arrive; the first host to arrive runs `reset_shared_state` (lock key,
  // counter) and the oracle's counters are cleared; the others wait until it has.
  template <class Reset>
  Status arrive(Reset&& reset_shared_state, std::chrono::milliseconds timeout);
  Status start_barrier(std::chrono::milliseconds timeout);  // all hosts ready
  Status end_barrier(std::chrono::milliseconds timeout);    // all hosts done
  Result<OracleReading> reading();

  int hosts() const { return hosts_; }

 private:
  HostCoordinator(redis::Connection connection, std::string run_id, int hosts)
      : connection_(std::move(connection)), run_id_(std::move(run_id)), hosts_(hosts) {}
  Result<long long> increment(const std::string& name);
  Status clear_oracle();
  Status mark_reset();
  Status wait_for(const std::string& name, long long at_least, std::chrono::milliseconds timeout);

  redis::Connection connection_;
  std::string run_id_;
  int hosts_;
};

template <class Reset>
Status HostCoordinator::arrive(Reset&& reset_shared_state, std::chrono::milliseconds timeout) {
  auto arrived = increment("arrived");
  if (!arrived) return arrived.error();
  if (*arrived == 1) {
    if (auto cleared = clear_oracle(); !cleared) return cleared;
    if (Status reset = reset_shared_state(); !reset) return reset;
    return mark_reset();
  }
  return wait_for("reset", 1, timeout);
}

// This machine's name as the documents record it: hostname:pid (two runs on
// one machine are two hosts).
std::string host_label();

// `locklab merge`: one combined document from the hosts' run documents of one
// run id. Sums acquisitions and confirmed increments; the oracle's high-water
// mark is the maximum any host read; the verdict is violation when the oracle
// saw two holders, any host saw a violation, or the shared counter is not
// exact (final vs the sum of confirmed increments, up to the unconfirmed
// writes). A usage Error when the documents do not belong to one multi-host run.
Result<nlohmann::json> merge_runs(const std::vector<nlohmann::json>& runs);

}  // namespace locklab::harness
