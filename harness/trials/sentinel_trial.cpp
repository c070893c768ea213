#include "trials/sentinel_trial.h"

#include "redis/sentinel.h"

#include "history/history.h"

namespace locklab::harness {

using namespace std::chrono_literals;

namespace {

// A client of the trial: discovers the master through the sentinels, makes
// its lock there, tries once (wait as given).
Result<TrialClient> acquire_via_sentinel(const SentinelTrial& trial, const SentinelTopology& topology,
                                         const SharedHistory& history, int client, std::chrono::milliseconds wait) {
  auto master = redis::discover_master(topology.sentinels(), topology.master_name());
  if (!master) return master.error();
  LockConfig config;
  config.key = "locklab:failover";
  config.ttl = trial.ttl;
  config.retry_interval = 20ms;
  config.wait_replicas = trial.wait_replicas;
  config.wait_replicas_timeout = 200ms;
  redis::ConnectionOptions server;
  server.endpoint = *master;
  config.servers = {server};
  return acquire_recorded(trial.lock, config, history, client, wait);
}

}  // namespace

Result<FailoverOutcome> run_sentinel_trial(const SentinelTrial& trial) {
  auto started = SentinelTopology::start(trial.sentinel);
  if (!started) return started.error();
  SentinelTopology& topology = **started;
  TrialSteps steps;
  steps.old_master = [&] { return topology.current_master(); };
  steps.hold_replication = [&]() -> Status {
    topology.replication().hold_replication();
    return Done{};
  };
  steps.held_bytes = [&] { return topology.replication().held_bytes(); };
  // The master dies; Sentinel promotes the replica. A's release later goes to
  // the dead master: an error, as in production.
  steps.fail_over = [&] { return topology.kill_master(); };
  // Each client discovers the master itself: B re-discovers, as A would after its connection broke.
  steps.acquire = [&](const SharedHistory& history, int client, std::chrono::milliseconds wait) {
    return acquire_via_sentinel(trial, topology, history, client, wait);
  };
  steps.lease = trial.ttl;
  return run_trial(steps);
}

}  // namespace locklab::harness
