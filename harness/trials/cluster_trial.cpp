#include "trials/cluster_trial.h"

#include "redis/cluster_routing.h"

#include "history/history.h"

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
  TrialSteps steps;
  steps.old_master = [&]() -> Result<redis::Endpoint> { return cluster.master().endpoint(); };
  steps.hold_replication = [&] { return cluster.hold_replication(); };
  steps.held_bytes = [&] { return cluster.held_bytes(); };
  // CLUSTER FAILOVER FORCE; A's release is later redirected to the new master: not its lock any more.
  steps.fail_over = [&] { return cluster.fail_over(); };
  // The demoted master's full resync drops A's key there too, and makes it the
  // replica the WAIT guard needs: B's outcome does not depend on how fast it rejoined.
  steps.after_failover = [&] { return cluster.wait_old_master_resynced(); };
  // B, seeded at another master, finds the slot's new owner and asks for the same lock.
  steps.acquire = [&](const SharedHistory& history, int client, std::chrono::milliseconds wait) {
    return acquire_in_cluster(trial, cluster, history, client, wait);
  };
  steps.lease = trial.ttl;
  return run_trial(steps);
}

}  // namespace locklab::harness
