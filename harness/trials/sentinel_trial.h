// The Sentinel failover trial (`locklab failover`): one scripted story on a
// SentinelTopology, judged by the checker (trials/trial.h).
#pragma once

#include <chrono>
#include <string>

#include "redis/result.h"

#include "servers/sentinel_topology.h"
#include "trials/trial.h"

namespace locklab::harness {

// One run of the failover fault (seed 004 §10, seed 001 §二.5): client A
// acquires while the replication stream is held, the master dies, Sentinel
// promotes the replica, client B discovers the new master and acquires the
// same lock. A's and B's sections are recorded in a SharedHistory and judged
// by the checker.
struct SentinelTrial {
  std::string lock = "lua-safe-delete";
  int wait_replicas = 0;  // 1 = the WAIT guard
  std::chrono::milliseconds ttl{10'000};
  SentinelSettings sentinel;
};

Result<FailoverOutcome> run_sentinel_trial(const SentinelTrial& trial);

}  // namespace locklab::harness
