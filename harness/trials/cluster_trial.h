// The Cluster failover trial (`locklab failover --cluster`): one scripted
// story on a ClusterFailoverTopology, judged by the checker (trials/trial.h).
#pragma once

#include <chrono>
#include <string>

#include "redis/result.h"

#include "servers/cluster_failover_topology.h"
#include "trials/trial.h"

namespace locklab::harness {

// The cluster variant of `locklab failover`: client A acquires while the
// replication stream of the key's master is held, the replica takes over with
// CLUSTER FAILOVER FORCE, the old master is demoted and resyncs, client B
// acquires the same lock. With wait_replicas = 1 A's acquire is refused (its
// write was never acknowledged), and B's, acknowledged by the demoted master
// now replicating from the new one, is the only grant.
struct ClusterFailoverTrial {
  std::string lock = "lua-safe-delete";
  int wait_replicas = 0;  // 1 = the WAIT guard
  std::chrono::milliseconds ttl{10'000};
  ClusterFailoverSettings cluster;
};

Result<FailoverOutcome> run_cluster_failover_trial(const ClusterFailoverTrial& trial);

}  // namespace locklab::harness
