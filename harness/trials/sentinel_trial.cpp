#include "trials/sentinel_trial.h"

#include "support/conditions.h"
#include "history/history.h"
#include "redis/sentinel.h"

namespace locklab::harness {

using namespace std::chrono_literals;

namespace {

// A client of the trial: discovers the master through the sentinels, makes
// its lock there, tries once (wait as given).
Result<TrialClient> acquire_via_sentinel(const FailoverTrial& trial, const SentinelTopology& topology,
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

Result<FailoverOutcome> run_failover_trial(const FailoverTrial& trial) {
  auto topology = SentinelTopology::start(trial.sentinel);
  if (!topology) return topology.error();
  std::string why;
  auto history = SharedHistory::create(2, 4, &why);
  if (!history) return Error{ErrorKind::io, why};

  FailoverOutcome outcome;
  auto old_master = (*topology)->current_master();
  if (!old_master) return old_master.error();
  outcome.old_master = *old_master;

  // A acquires while nothing it writes reaches the replica.
  (*topology)->replication().hold_replication();
  auto first = acquire_via_sentinel(trial, **topology, *history, 0, 0ms);
  if (!first) return first.error();
  // A's reply can reach A before the proxy has read the stream the master
  // wrote with it: poll for the held bytes (none come if A wrote nothing).
  wait_until([&] { return (*topology)->replication().held_bytes() > 0; }, 2000ms);
  outcome.held_bytes = (*topology)->replication().held_bytes();
  if (auto tested = require_held_write(outcome.held_bytes); !tested) return tested.error();

  auto promoted = (*topology)->kill_master();
  if (!promoted) return promoted.error();
  outcome.new_master = *promoted;

  // B re-discovers (as A would after its connection broke) and asks for the same lock.
  auto second = acquire_via_sentinel(trial, **topology, *history, 1, 1000ms);
  if (!second) return second.error();
  leave(*second, *history);
  leave(*first, *history);  // A's release goes to the dead master: an error, as in production
  judge_trial(*first, *second, *history, outcome);
  return outcome;
}

}  // namespace locklab::harness
