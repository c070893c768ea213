#include "run/run_servers.h"

#include "redis/sentinel.h"

#include "servers/given_or_own_servers.h"
#include "servers/server_stats.h"

namespace locklab::harness {
namespace {

using std::chrono::milliseconds;

// --cluster: the lock is reached through the cluster's seed, routed by slot;
// the counter too unless --counter-redis (run_cluster.h).
Result<RunServers> provide_cluster_servers(const RunOptions& options, const Capabilities& can) {
  auto cluster = provide_cluster(options.redis, static_cast<std::size_t>(options.wait_replicas));
  if (!cluster) return cluster.error();
  RunServers servers;
  if (can.uses_redis) servers.lock.push_back(cluster->seed);
  static const WorkloadConfig defaults;  // the counter's key is the workload's
  const std::string& counter_key = defaults.counter_key;
  servers.counter = options.counter_redis ? coordinator_options(*options.counter_redis) : cluster->seed;
  // The cluster is the lock servers: its command count then includes the counter's GET/SET.
  servers.counter_shared = !options.counter_redis && can.uses_redis;
  servers.cluster_facts = cluster_facts(*cluster, static_cast<std::size_t>(options.wait_replicas), options.key, counter_key,
                                        !options.counter_redis);
  servers.cluster = std::move(cluster).value();
  return servers;
}

// --cluster with the failover fault (a started cluster, not --redis seeds):
// a cluster whose key's master replicates through a proxy the fault holds
// (servers/cluster_failover_topology.h), reached through a seed at another
// master. The counter is a server of its own: the failover must not lose it.
Result<RunServers> provide_cluster_failover_servers(const RunOptions& options) {
  ClusterFailoverSettings settings;
  settings.key = options.key;
  auto topology = ClusterFailoverTopology::start(settings);
  if (!topology) return Error{ErrorKind::io, "the failover cluster: " + topology.error().message};
  RunServers servers;
  servers.cluster_failover = std::move(topology).value();
  servers.lock.push_back(servers.cluster_failover->seed());
  auto counter_server = provide_given_or_own_servers({}, 1);
  if (!counter_server) return Error{ErrorKind::io, "cannot start redis-server: " + counter_server.error().message};
  servers.owned = std::move(counter_server->owned);
  servers.counter_server = servers.owned.back().get();
  servers.counter = servers.counter_server->connection_options();
  servers.cluster_facts = {{"started", true}, {"failover", "the key's master replicates through a proxy"},
                           {"masters", servers.cluster_failover->cluster().masters().size()}};
  return servers;
}

Result<RunServers> provide_run_servers(const RunOptions& options, const Capabilities& can, const FaultNeeds& needs) {
  if (options.cluster && options.redis.empty() && needs.replica_via_proxy && can.uses_redis)
    return provide_cluster_failover_servers(options);
  if (options.cluster) return provide_cluster_servers(options, can);
  RunServers servers;
  if (!options.redis.empty()) {
    auto given = provide_given_or_own_servers(options.redis, 0, coordinator_options);
    if (!given) return given.error();
    servers.lock = std::move(given->lock);
    if (!can.uses_redis) servers.lock.clear();
    servers.counter = coordinator_options(options.counter_redis.value_or(options.redis.front()));
    for (const auto& lock : servers.lock)
      if (lock.endpoint.to_string() == servers.counter.endpoint.to_string()) servers.counter_shared = true;
    return servers;
  }
  const std::size_t lock_count = !can.uses_redis ? 0 : can.multi_node ? options.nodes : 1;
  if (lock_count > 0) {
    // With the failover guard on, the lock server gets replicas to WAIT for
    // (through the replication proxy when a failover will lose a write).
    LayoutPlan plan;
    plan.lock_servers = lock_count;
    plan.clients = options.clients;
    plan.replica_via_proxy = needs.replica_via_proxy;
    plan.replicas = needs.replica_via_proxy ? 0 : options.wait_replicas;
    plan.client_proxies = needs.client_proxies;
    plan.clock_shim = needs.clock_shim;
    auto topology = LockServerLayout::start(plan);
    if (!topology)
      return Error{topology.error().kind == ErrorKind::usage ? ErrorKind::usage : ErrorKind::io, topology.error().message};
    servers.topology = std::move(topology).value();
    servers.lock = servers.topology->endpoints();
  }
  auto counter_server = provide_given_or_own_servers({}, 1);  // one fresh master of our own
  if (!counter_server) return Error{ErrorKind::io, "cannot start redis-server: " + counter_server.error().message};
  servers.owned = std::move(counter_server->owned);
  servers.counter_server = servers.owned.back().get();
  servers.counter = servers.counter_server->connection_options();
  return servers;
}

}  // namespace

redis::ConnectionOptions coordinator_options(const redis::Endpoint& endpoint) {
  redis::ConnectionOptions options;
  options.endpoint = endpoint;
  options.connect_timeout = milliseconds{1000};
  options.command_timeout = milliseconds{2000};
  return options;
}

// The run then uses that master as if it was given with --redis.
Result<RunOptions> resolve_sentinel_master(RunOptions options) {
  if (options.sentinels.empty()) return options;
  std::vector<redis::ConnectionOptions> sentinels;
  for (const auto& endpoint : options.sentinels) sentinels.push_back(coordinator_options(endpoint));
  auto master = redis::discover_master(sentinels, options.sentinel_master);
  if (!master) return Error{ErrorKind::io, "--sentinel: " + master.error().message};
  options.redis = {*master};
  return options;
}

// Each answering before anything starts: a dead endpoint is one clear line, not a run of errors.
Result<RunServers> provide_reachable_servers(const RunOptions& options, const Capabilities& can,
                                             const FaultNeeds& needs) {
  auto servers = provide_run_servers(options, can, needs);
  if (!servers) return servers.error();
  for (const auto& server : servers->lock)
    if (auto ok = reachable(server); !ok) return ok.error();
  if (auto ok = reachable(servers->counter); !ok) return ok.error();
  return servers;
}

ServerFacts server_facts(const RunServers& servers) {
  ServerFacts facts;
  for (const auto& server : servers.lock) facts.lock_endpoints.push_back(server.endpoint.to_string());
  facts.counter_endpoint = servers.counter.endpoint.to_string();
  facts.counter_shared = servers.counter_shared;
  facts.cluster = servers.cluster_facts;
  facts.version = server_version(servers.lock.empty() ? servers.counter : servers.lock.front());
  return facts;
}

Status start_from_clean_slate(const RunServers& servers, const NemesisContext& keys, CounterResource& counter) {
  for (const auto& key : lock_keys(keys))
    for (const auto& server : servers.lock) (void)ask(server, {"DEL", key});
  if (auto reset = counter.reset(); !reset) return Error{ErrorKind::io, "counter reset: " + reset.error().message};
  return Done{};
}

KeysLeft lock_keys_left(const RunServers& servers, const NemesisContext& context) {
  KeysLeft left;
  for (const auto& key : context.client_keys) left.looked = left.looked && !key.empty();
  for (const auto& key : lock_keys(context)) {
    const auto on_servers = keys_left(servers.lock, key);
    left.keys += on_servers.keys;
    left.without_ttl += on_servers.without_ttl;
  }
  if (!left.looked) left = {0, 0, false};
  return left;
}

}  // namespace locklab::harness
