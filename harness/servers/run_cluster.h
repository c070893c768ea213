// The lock servers of `locklab run --cluster` (docs/topologies.md, "Redis
// Cluster"): a 3-master Redis Cluster started for the run, or an existing one
// reached through its seeds (--redis). Clients, the counter and the
// coordinator's own reads all use one seed with ConnectionOptions::cluster
// set, so every command lands on the master that owns its key's slot.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/cluster_routing.h"

#include "servers/redis_cluster.h"

namespace locklab::harness {

inline constexpr std::size_t kRunClusterMasters = 3;

struct RunCluster {
  std::unique_ptr<RedisCluster> started;  // null: an existing cluster
  redis::ConnectionOptions seed;          // cluster = true; the first seed that answered
  std::vector<redis::SlotRange> slots;    // CLUSTER SLOTS when the run started

  // The master that owned `key`'s slot when the run started.
  std::optional<redis::Endpoint> master_of(const std::string& key) const;
  // Every master once, in slot order.
  std::vector<redis::Endpoint> masters() const;
};

// Without seeds (--redis): starts kRunClusterMasters masters with
// replicas_per_master replicas each (--wait-replicas: the WAIT guard needs them).
// With them: the first seed that answers CLUSTER SLOTS. ErrorKind::io when neither works.
Result<RunCluster> provide_cluster(const std::vector<redis::Endpoint>& seeds, std::size_t replicas_per_master);

// The run document's redis.cluster block: who started it, the masters, and
// where the lock key and the counter key live (the counter's is null when it is
// not on the cluster, i.e. --counter-redis).
nlohmann::json cluster_facts(const RunCluster& cluster, std::size_t replicas_per_master, const std::string& lock_key,
                             const std::string& counter_key, bool counter_on_cluster);

}  // namespace locklab::harness
