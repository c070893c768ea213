#include "trials/cluster_trial.h"

#include "support/conditions.h"
#include "history/history.h"
#include "redis/cluster.h"

namespace locklab::harness {

using namespace std::chrono_literals;

namespace {

Result<TrialClient> acquire_in_cluster(const ClusterFailoverTrial& trial, const ClusterFailoverTopology& topology,
                                       const SharedHistory& history, int client, std::chrono::milliseconds wait) {
  LockConfig config;
  config.key = trial.cluster.key;
  config.ttl = trial.ttl;
  config.retry_interval = 20ms;
  config.wait_replicas = trial.wait_replicas;
  config.wait_replicas_timeout = 200ms;
  config.servers = {topology.seed()};
  return acquire_recorded(trial.lock, config, history, client, wait);
}

}  // namespace

Result<FailoverOutcome> run_cluster_failover_trial(const ClusterFailoverTrial& trial) {
  auto topology = ClusterFailoverTopology::start(trial.cluster);
  if (!topology) return topology.error();
  auto& cluster = **topology;
  std::string why;
  auto history = SharedHistory::create(2, 4, &why);
  if (!history) return Error{ErrorKind::io, why};

  FailoverOutcome outcome;
  outcome.old_master = cluster.master().endpoint();

  // A acquires while nothing it writes reaches the replica.
  if (auto held = cluster.hold_replication(); !held) return held.error();
  auto first = acquire_in_cluster(trial, cluster, *history, 0, 0ms);
  if (!first) return first.error();
  // A's reply can reach A before the proxy has read the stream the master
  // wrote with it: poll for the held bytes (none come if A wrote nothing).
  wait_until([&] { return cluster.held_bytes() > 0; }, 2000ms);
  outcome.held_bytes = cluster.held_bytes();
  if (auto tested = require_held_write(outcome.held_bytes); !tested) return tested.error();

  auto promoted = cluster.fail_over();
  if (!promoted) return promoted.error();
  outcome.new_master = *promoted;
  // The demoted master's full resync drops A's key there too, and makes it the
  // replica the WAIT guard needs: B's outcome does not depend on how fast it rejoined.
  if (auto resynced = cluster.wait_old_master_resynced(); !resynced) return resynced.error();

  // B, seeded at another master, finds the slot's new owner and asks for the same lock.
  auto second = acquire_in_cluster(trial, cluster, *history, 1, 1000ms);
  if (!second) return second.error();
  leave(*second, *history);
  leave(*first, *history);  // A's release is redirected to the new master: not its lock any more
  judge_trial(*first, *second, *history, outcome);
  return outcome;
}

}  // namespace locklab::harness
