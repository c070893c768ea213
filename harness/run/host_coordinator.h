// Runs spread over several client hosts (issue 12 item 5): `locklab run` on
// each machine with the same --run-id, --hosts N and --oracle HOST:PORT. A run
// on one host may also start an oracle of its own (bare --oracle): the same
// oracle, the same keys, one host. This is one host's part in it; the run
// provides the oracle and judges what it read (host_judgment.h).
//
// The oracle is a Redis of its own, never subject to faults. It serves
//   - the start barrier: each host INCRs `ready` and waits until N are ready;
//     the first host to arrive resets the shared lock server's key and counter
//     (once for the whole run) before anyone is ready;
//   - the section oracle (redis_section_oracle.h): every client's sections
//     and the pairs of holders inside at once, judged here at the end
//     (reading()) by classify_overlap (checker.h);
//   - the end barrier: each host waits until all N are done, so every host
//     reads the same final counter and the same pairs.
// Keys: locklab:run:<run id>:{arrived,reset,ready,done,holders,max,overlaps,
// pairs,seq,sections,section:<id>}. Use a fresh run id per run: `arrived` is
// never cleared, and a host arriving beyond --hosts is refused (a usage error).
//
// `locklab merge` combines the hosts' documents (merge_runs.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "redis/connection.h"
#include "redis/result.h"

#include "history/checker.h"
#include "run/redis_section_oracle.h"

namespace locklab::harness {

// Pairs of sections that were inside at once, by what classify_overlap says of them.
struct OraclePairs {
  std::int64_t violations = 0;
  std::int64_t fenced_off = 0;
  std::int64_t serialized = 0;
  std::int64_t total() const { return violations + fenced_off + serialized; }
};

// What the oracle saw over the whole run (every host's sections).
struct OracleReading {
  long long max_occupancy = 0;       // most holders present at one entry
  long long overlapped_entries = 0;  // entries that found another holder inside
  long long sections = 0;            // sections entered (all runs of this id)
  OraclePairs pairs;
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
  Result<bool> started_before();  // every host got ready, or one was done: the run went on
  Status clear_oracle();
  Status mark_reset();
  Status wait_for(const std::string& name, long long at_least, std::chrono::milliseconds timeout);
  Result<std::vector<std::pair<long long, long long>>> read_pairs();
  Result<std::map<long long, ResourceAccess>> read_accesses(const std::set<long long>& sections);
  Result<OraclePairs> judge_pairs();

  redis::Connection connection_;
  std::string run_id_;
  int hosts_;
};

template <class Reset>
Status HostCoordinator::arrive(Reset&& reset_shared_state, std::chrono::milliseconds timeout) {
  auto arrived = increment("arrived");
  if (!arrived) return arrived.error();
  // `arrived` is never cleared: more arrivals than hosts means the id ran
  // before. Its `reset` is set already, so this host would skip the reset and
  // read the last run's counter and pairs as its own: refused, not guessed at.
  // So is a later arrival after every host got ready, or one ended: that run
  // started without this host (a previous run with fewer hosts than --hosts).
  const auto started = *arrived > 1 ? started_before() : Result<bool>(false);
  if (!started) return started.error();
  if (*arrived > hosts_ || *started)
    return Error{ErrorKind::usage, "--run-id " + run_id_ + " was used before with this oracle (" +
                                       std::to_string(*arrived) + " arrivals for --hosts " + std::to_string(hosts_) +
                                       (*started ? ", and its hosts had started" : "") +
                                       "): give every run a fresh run id"};
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

}  // namespace locklab::harness
