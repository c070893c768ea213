#include "servers/run_cluster.h"

#include <algorithm>

namespace locklab::harness {
namespace {

// The slot map through `seed`; a seed that is not a cluster node answers
// CLUSTER SLOTS with an error, which says so.
Result<std::vector<redis::SlotRange>> slot_map(const redis::ConnectionOptions& seed) {
  redis::ClusterConnection cluster(seed);
  if (auto loaded = cluster.refresh_slot_map(); !loaded) return loaded.error();
  if (cluster.slot_map().empty()) return Error{ErrorKind::reply, seed.endpoint.to_string() + ": no slot is served"};
  return cluster.slot_map();
}

Result<RunCluster> existing_cluster(const std::vector<redis::Endpoint>& seeds) {
  std::string why;
  for (const auto& endpoint : seeds) {
    RunCluster servers;
    servers.seed.endpoint = endpoint;
    servers.seed.cluster = true;
    auto slots = slot_map(servers.seed);
    if (slots) {
      servers.slots = std::move(slots).value();
      return servers;
    }
    why += (why.empty() ? "" : "; ") + slots.error().message;
  }
  return Error{ErrorKind::io, "--cluster: no seed answered CLUSTER SLOTS (" + why + ")"};
}

Result<RunCluster> started_cluster(std::size_t replicas_per_master) {
  ClusterOptions plan;
  plan.masters = kRunClusterMasters;
  plan.replicas_per_master = replicas_per_master;
  auto cluster = RedisCluster::start(plan);
  if (!cluster) return Error{ErrorKind::io, "cannot start a Redis Cluster: " + cluster.error().message};
  RunCluster servers;
  servers.seed = (*cluster)->seed();
  servers.started = std::move(cluster).value();
  auto slots = slot_map(servers.seed);
  if (!slots) return Error{ErrorKind::io, "the started cluster: " + slots.error().message};
  servers.slots = std::move(slots).value();
  return servers;
}

}  // namespace

std::optional<redis::Endpoint> RunCluster::master_of(const std::string& key) const {
  const int slot = redis::key_slot(key);
  for (const auto& range : slots)
    if (range.first <= slot && slot <= range.last) return range.master;
  return std::nullopt;
}

std::vector<redis::Endpoint> RunCluster::masters() const {
  std::vector<redis::SlotRange> ordered = slots;
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<redis::Endpoint> masters;
  for (const auto& range : ordered) {
    const bool seen = std::any_of(masters.begin(), masters.end(), [&](const redis::Endpoint& known) {
      return known.to_string() == range.master.to_string();
    });
    if (!seen) masters.push_back(range.master);
  }
  return masters;
}

Result<RunCluster> provide_cluster(const std::vector<redis::Endpoint>& seeds, std::size_t replicas_per_master) {
  return seeds.empty() ? started_cluster(replicas_per_master) : existing_cluster(seeds);
}

nlohmann::json cluster_facts(const RunCluster& cluster, std::size_t replicas_per_master, const std::string& lock_key,
                             const std::string& counter_key, bool counter_on_cluster) {
  auto where = [&](const std::string& key) -> nlohmann::json {
    const auto master = cluster.master_of(key);
    return {{"key", key}, {"slot", redis::key_slot(key)}, {"master", master ? nlohmann::json(master->to_string()) : nlohmann::json(nullptr)}};
  };
  nlohmann::json masters = nlohmann::json::array();
  for (const auto& master : cluster.masters()) masters.push_back(master.to_string());
  return {{"started", cluster.started != nullptr},
          {"seed", cluster.seed.endpoint.to_string()},
          {"masters", masters},
          {"replicas_per_master", cluster.started ? nlohmann::json(replicas_per_master) : nlohmann::json(nullptr)},
          {"lock_key", where(lock_key)},
          {"counter_key", counter_on_cluster ? where(counter_key) : nlohmann::json(nullptr)}};
}

}  // namespace locklab::harness
