// What the failover trials share (Sentinel: trials/sentinel_trial.h, Cluster:
// trials/cluster_trial.h): two clients of one lock, A before the failover and B
// after it, each trying once; their critical sections are recorded in a
// SharedHistory and judged by the checker, which says whether both held the
// lock at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "redis/connection.h"
#include "redis/result.h"

#include "lock.h"

#include "history/checker.h"
#include "history/history.h"

namespace locklab::harness {

struct FailoverOutcome {
  std::string first_acquire;   // A's try_acquire outcome ("acquired", "error" ...)
  std::string first_error;     // why, when not acquired
  std::string second_acquire;  // B's, on the promoted master
  std::string second_error;
  redis::Endpoint old_master, new_master;
  std::uint64_t held_bytes = 0;  // replication bytes the proxy held when the master failed over
  int double_grants = 0;         // 1 when A and B held the lock at the same time
  Verdict verdict;               // the checker's
};

// One client's single attempt; an acquired lock is inside its critical section
// (recorded as entered) until leave().
// A trial whose lock write never reached the held replication stream tested
// nothing (A wrote nothing, or the stream was not held): an error, never a
// `safe` verdict with 0 double grants.
Status require_held_write(std::uint64_t held_bytes);

struct TrialClient {
  std::unique_ptr<DistributedLock> lock;
  Acquire outcome = Acquire::error;
  std::string error;
  CsRecord* record = nullptr;
};

// Makes `lock_name` with `config` and tries once (wait as given); an
// acquisition enters `client`'s critical section in `history`.
Result<TrialClient> acquire_recorded(const std::string& lock_name, const LockConfig& config,
                                     const SharedHistory& history, int client, std::chrono::milliseconds wait);

// Leaves the critical section (if entered) and releases.
void leave(TrialClient& client, const SharedHistory& history);

// Fills in the outcome's acquire fields, double grants and verdict from both clients and the history.
void judge_trial(const TrialClient& first, const TrialClient& second, const SharedHistory& history,
                 FailoverOutcome& outcome);

// The topology's part of a failover trial; run_trial() tells the story around it.
struct TrialSteps {
  std::function<Result<redis::Endpoint>()> old_master;  // the master A will write to
  std::function<Status()> hold_replication;             // nothing A writes reaches the replica
  std::function<std::uint64_t()> held_bytes;            // replication bytes the proxy holds now
  std::function<Result<redis::Endpoint>()> fail_over;   // the replica takes over: the new master
  std::function<Status()> after_failover;               // optional: what must settle before B tries
  // One client's single attempt (A: 0, B: 1), made where the topology says.
  std::function<Result<TrialClient>(const SharedHistory& history, int client, std::chrono::milliseconds wait)> acquire;
  // A's lease. A failover that takes longer (Sentinel's forced fallback after
  // a split vote) lets B in by the TTL alone: the trial then proves nothing
  // and is an error, not a double grant. Zero: not checked.
  std::chrono::milliseconds lease{0};
};

// The story both trials tell: A acquires while replication is held (which
// must hold some bytes), the master fails over, B acquires the same lock;
// both leave and the checker judges.
Result<FailoverOutcome> run_trial(const TrialSteps& steps);

}  // namespace locklab::harness
