// The servers of one run: the lock servers (given with --redis or --sentinel,
// a cluster with --cluster, or our own laid out as the faults need them) and
// the counter server, each answering before anything starts; the facts the
// document records of them, and what the run's locks left on them.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/connection.h"
#include "redis/result.h"

#include "registry.h"

#include "history/checker.h"
#include "nemesis/fault.h"
#include "nemesis/nemesis.h"
#include "resource/counter_resource.h"
#include "run/options.h"
#include "run/run_document.h"
#include "servers/cluster_failover_topology.h"
#include "servers/lock_server_layout.h"
#include "servers/redis_server.h"
#include "servers/run_cluster.h"

namespace locklab::harness {

// Our own servers, when no --redis: the lock servers laid out as the faults
// need them (servers/lock_server_layout.h) + one counter server that no fault will ever touch
// (the resource is not what is under test).
struct RunServers {
  ServerList owned;                            // the counter server
  std::unique_ptr<LockServerLayout> topology;  // the lock servers (own servers, a lock that uses Redis)
  std::vector<redis::ConnectionOptions> lock;
  redis::ConnectionOptions counter;
  RedisServer* counter_server = nullptr;
  bool counter_shared = false;  // the counter lives on a lock server
  std::optional<RunCluster> cluster;  // --cluster: keeps a cluster started for the run alive until its end
  std::unique_ptr<ClusterFailoverTopology> cluster_failover;  // --cluster --fault failover
  nlohmann::json cluster_facts = nullptr;
};

// Connections the coordinator itself uses: short timeouts, a bad endpoint must fail fast.
redis::ConnectionOptions coordinator_options(const redis::Endpoint& endpoint);

// --sentinel: the options with --redis set to the master the sentinels name now.
Result<RunOptions> resolve_sentinel_master(RunOptions options);

// The servers of the run for its locks' capabilities and its faults' needs,
// each answering: an Error when one cannot be started or reached (usage when
// the options ask for a layout that cannot be: lock_server_layout.h).
Result<RunServers> provide_reachable_servers(const RunOptions& options, const Capabilities& can,
                                             const FaultNeeds& needs);

// What the document records of the servers (run_document.h).
ServerFacts server_facts(const RunServers& servers);

// No lock left from an earlier run (the keys the run's locks hold), the counter from zero.
Status start_from_clean_slate(const RunServers& servers, const NemesisContext& keys, CounterResource& counter);

// What the run's locks left on their servers: every key they hold; not
// looked for when one lock's key is unknown (an adapter that named none).
KeysLeft lock_keys_left(const RunServers& servers, const NemesisContext& context);

}  // namespace locklab::harness
