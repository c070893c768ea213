// `locklab fleets`: which pairs of locks can share a key (issue 18 §5). For
// each pair, one short fault-free `locklab run --fleet A:N,B:N` (its own
// redis-servers, the run's workload), judged by sweeps/fleet_judgment.h from
// the run and the lock catalog; DIR/fleets.md and DIR/fleets.json
// (report/fleets_report.h). docs/peers.md, "In one fleet".
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "redis/result.h"

#include "report/fleets_report.h"
#include "run/run.h"
#include "workload/user_adapters.h"

namespace locklab::harness {

struct FleetsOptions {
  // Every pair among these locks, in order. Empty: default_fleet_pairs().
  std::vector<std::string> locks;
  UserAdapters user;     // the user's own adapters (--adapter LABEL='CMD', --catalog FILE)
  int clients_each = 2;  // clients of each lock in a pair's run
  RunOptions base;       // the workload of every pair's run (fleet and clients set per pair)
  std::string out;       // empty: results/runs/<run-id>
  std::string command;   // recorded in the report
};

// The shipped adapters and then the user's own, each with every generation
// that is a lock across processes on Redis (setnx ... fair-queue, redlock
// included) and each generation's variant row (reentrant-watchdog+redisson),
// and with every other adapter.
std::vector<std::pair<std::string, std::string>> default_fleet_pairs(const UserAdapters& user = {});

// The workload of `fleets` unless told otherwise: RunOptions' defaults (hold
// 1 ms, ttl 2 s, wait 1 s, retry 5 ms, process clients) for 1 s a pair.
RunOptions default_fleets_workload();

// Runs every pair and writes the report. A pair that could not be measured is
// in the result (Sharing::not_measured), not an Error; an Error is bad options
// (ErrorKind::usage) or an output directory that cannot be written.
Result<FleetsResult> run_fleets(const FleetsOptions& options);

}  // namespace locklab::harness
