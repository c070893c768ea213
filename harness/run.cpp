#include "run.h"

#include <algorithm>

#include "checker.h"
#include "cluster_servers.h"
#include "counter_resource.h"
#include "faults.h"
#include "metrics.h"
#include "multihost.h"
#include "redis/sentinel.h"
#include "redis_server.h"
#include "registry.h"
#include "results.h"
#include "server_stats.h"
#include "topology.h"

namespace locklab::harness {
namespace {

using std::chrono::milliseconds;

// Connections the coordinator itself uses: short timeouts, a bad endpoint must fail fast.
redis::ConnectionOptions coordinator_options(const redis::Endpoint& endpoint) {
  redis::ConnectionOptions options;
  options.endpoint = endpoint;
  options.connect_timeout = milliseconds{1000};
  options.command_timeout = milliseconds{2000};
  return options;
}

// Our own servers, when no --redis: the lock servers laid out as the faults
// need them (topology.h) + one counter server that no fault will ever touch
// (the resource is not what is under test).
struct Servers {
  ServerList owned;                    // the counter server
  std::unique_ptr<Topology> topology;  // the lock servers (own servers, a lock that uses Redis)
  std::vector<redis::ConnectionOptions> lock;
  redis::ConnectionOptions counter;
  RedisServer* counter_server = nullptr;
  bool counter_shared = false;  // the counter lives on a lock server
  std::optional<ClusterServers> cluster;  // --cluster: keeps a cluster started for the run alive until its end
  nlohmann::json cluster_facts = nullptr;
};

// --cluster: the lock is reached through the cluster's seed, routed by slot;
// the counter too unless --counter-redis (cluster_servers.h).
Result<Servers> provide_cluster_servers(const RunOptions& options, const Generation& generation) {
  auto cluster = provide_cluster(options);
  if (!cluster) return cluster.error();
  Servers servers;
  if (generation.capabilities.uses_redis) servers.lock.push_back(cluster->seed);
  static const WorkloadConfig defaults;  // the counter's key is the workload's
  const std::string& counter_key = defaults.counter_key;
  servers.counter = options.counter_redis ? coordinator_options(*options.counter_redis) : cluster->seed;
  // The cluster is the lock servers: its command count then includes the counter's GET/SET.
  servers.counter_shared = !options.counter_redis && generation.capabilities.uses_redis;
  servers.cluster_facts = cluster_facts(*cluster, options, counter_key);
  servers.cluster = std::move(cluster).value();
  return servers;
}

Result<Servers> provide_servers(const RunOptions& options, const Generation& generation, const FaultNeeds& needs) {
  if (options.cluster) return provide_cluster_servers(options, generation);
  Servers servers;
  if (!options.redis.empty()) {
    for (const auto& endpoint : options.redis) servers.lock.push_back(coordinator_options(endpoint));
    if (!generation.capabilities.uses_redis) servers.lock.clear();
    servers.counter = coordinator_options(options.counter_redis.value_or(options.redis.front()));
    for (const auto& lock : servers.lock)
      if (lock.endpoint.to_string() == servers.counter.endpoint.to_string()) servers.counter_shared = true;
    return servers;
  }
  const std::size_t lock_count = !generation.capabilities.uses_redis ? 0 : generation.capabilities.multi_node ? options.nodes : 1;
  if (lock_count > 0) {
    // With the failover guard on, the lock server gets replicas to WAIT for
    // (through the replication proxy when a failover will lose a write).
    TopologyPlan plan;
    plan.lock_servers = lock_count;
    plan.clients = options.clients;
    plan.replica_via_proxy = needs.replica_via_proxy;
    plan.replicas = needs.replica_via_proxy ? 0 : options.wait_replicas;
    plan.client_proxies = needs.client_proxies;
    plan.clock_shim = needs.clock_shim;
    auto topology = Topology::start(plan);
    if (!topology)
      return Error{topology.error().kind == ErrorKind::usage ? ErrorKind::usage : ErrorKind::io, topology.error().message};
    servers.topology = std::move(topology).value();
    servers.lock = servers.topology->endpoints();
  }
  auto counter_server = RedisServer::start();
  if (!counter_server) return Error{ErrorKind::io, "cannot start redis-server: " + counter_server.error().message};
  servers.owned.push_back(std::move(counter_server).value());
  servers.counter_server = servers.owned.back().get();
  servers.counter = servers.counter_server->connection_options();
  return servers;
}

ServerFacts server_facts(const Servers& servers) {
  ServerFacts facts;
  for (const auto& server : servers.lock) facts.lock_endpoints.push_back(server.endpoint.to_string());
  facts.counter_endpoint = servers.counter.endpoint.to_string();
  facts.counter_shared = servers.counter_shared;
  facts.cluster = servers.cluster_facts;
  facts.version = server_version(servers.lock.empty() ? servers.counter : servers.lock.front());
  return facts;
}

WorkloadConfig workload_config(const RunOptions& options, const Servers& servers) {
  WorkloadConfig workload;
  workload.lock_name = options.lock;
  workload.lock.key = options.key;
  workload.lock.ttl = milliseconds{options.ttl_ms};
  workload.lock.retry_interval = milliseconds{options.retry_ms};
  workload.lock.wait_replicas = options.wait_replicas;
  workload.lock.wait_replicas_timeout = milliseconds{options.wait_replicas_timeout_ms};
  // A lock may legitimately block up to its wait (+ a lease) on one call.
  const milliseconds command_timeout{std::max(2000, options.wait_ms + options.ttl_ms)};
  for (const auto& server : servers.lock) {
    redis::ConnectionOptions client = server;
    client.command_timeout = command_timeout;
    workload.lock.servers.push_back(client);
  }
  if (servers.topology != nullptr && servers.topology->plan().client_proxies) {
    // Each client through its own links, so a fault can act on one client's network.
    std::vector<std::vector<redis::ConnectionOptions>> per_client;
    for (int i = 0; i < options.clients; ++i) {
      per_client.push_back(servers.topology->client_endpoints(i));
      for (auto& link : per_client.back()) link.command_timeout = command_timeout;
    }
    workload.client_servers = [per_client](int client) { return per_client.at(static_cast<std::size_t>(client)); };
  }
  workload.counter = servers.counter;
  workload.clients = options.clients;
  workload.mode = options.mode;
  workload.ops = options.ops;
  workload.duration = milliseconds{static_cast<std::int64_t>(options.duration_s * 1000)};
  workload.hold = milliseconds{options.hold_ms};
  workload.wait = milliseconds{options.wait_ms};
  workload.progress = options.progress;
  return workload;
}

// Records per client: --ops bounds them; a duration run gets room for a fast
// lock (mapped lazily, untouched pages cost nothing).
std::size_t record_capacity(const RunOptions& options) {
  if (options.ops) return static_cast<std::size_t>(std::min<std::int64_t>(*options.ops, 2'000'000));
  return static_cast<std::size_t>(std::clamp(options.duration_s * 100'000.0, 10'000.0, 2'000'000.0));
}

Tally tally_clients(const SharedHistory& history, const WorkloadOutcome& outcome, ClientMode mode) {
  Tally t;
  for (int i = 0; i < history.clients(); ++i) {
    const ClientSlot& slot = history.slot(i);
    t.attempts += slot.attempts;
    t.acquired += slot.acquired;
    t.timeouts += slot.timeouts;
    t.errors += slot.errors;
    t.unknown += slot.unknown;
    t.release_errors += slot.release_errors;
    t.stale += slot.stale_writes_rejected;
    t.counter_errors += slot.counter_errors;
    t.round_trips += slot.round_trips;
    t.commands += slot.commands;
    t.leases_lost += slot.leases_lost;
    if (slot.has_node_tally.load() != 0) {
      if (!t.nodes) t.nodes.emplace();
      t.nodes->voted_for += static_cast<std::uint64_t>(slot.node_voted_for.load());
      t.nodes->voted_against += static_cast<std::uint64_t>(slot.node_voted_against.load());
      t.nodes->errored += static_cast<std::uint64_t>(slot.node_errored.load());
      t.nodes->timed_out += static_cast<std::uint64_t>(slot.node_timed_out.load());
    }
    t.truncated = t.truncated || slot.truncated.load() != 0;
    t.per_client.push_back(slot.acquired);
    if (slot.open_wait_ns > 0) t.open_waits.push_back(slot.open_wait_ns);
    t.spans.push_back({slot.started_ns, slot.finished_ns > 0 ? slot.finished_ns.load() : outcome.end_ns});
    if (slot.last_error[0] != '\0') t.last_error = slot.last_error;
  }
  if (mode == ClientMode::thread) {  // traffic is process-wide: the coordinator measured it once
    t.round_trips = static_cast<std::int64_t>(outcome.thread_traffic.round_trips);
    t.commands = static_cast<std::int64_t>(outcome.thread_traffic.commands);
  }
  return t;
}

// Why the run could not measure (empty = it could).
std::vector<std::string> measurement_errors(const Tally& t, const WorkloadOutcome& outcome,
                                            const Result<long long>& counter_final) {
  std::vector<std::string> errors;
  if (!counter_final) errors.push_back("cannot read the counter at the end: " + counter_final.error().message);
  if (t.acquired == 0 && t.errors + t.unknown > 0)
    errors.push_back("no acquisition succeeded; " + std::to_string(t.errors + t.unknown) + " attempts failed (" +
                     t.last_error + ")");
  if (outcome.killed_clients > 0)
    errors.push_back(std::to_string(outcome.killed_clients) +
                     " client(s) did not finish by the hard deadline (processes are killed, threads waited for)");
  if (outcome.failed_clients > 0)
    errors.push_back(std::to_string(outcome.failed_clients) +
                     " client(s) failed during the run (an error or exception, see stderr): their sections are missing");
  return errors;
}

OracleConfig oracle_config(const RunOptions& options) {
  return OracleConfig{coordinator_options(*options.oracle), options.run_id};
}

// The document's "multihost" block: what this host and the oracle saw.
nlohmann::json multihost_block(const RunOptions& options, const Result<OracleReading>& reading,
                               const std::optional<std::int64_t>& counter_final, std::int64_t confirmed) {
  return {{"run_id", options.run_id},
          {"host", host_label()},
          {"hosts", options.hosts},
          {"oracle", options.oracle->to_string()},
          {"max_occupancy", reading ? reading->max_occupancy : -1},
          {"overlapped_entries", reading ? reading->overlapped_entries : -1},
          {"counter_final", counter_final ? nlohmann::json(*counter_final) : nlohmann::json(nullptr)},
          {"confirmed_increments", confirmed}};
}

}  // namespace

// --sentinel: the run uses the master the sentinels name now, as if given with --redis.
Result<RunOptions> resolve_sentinel_master(RunOptions options) {
  if (options.sentinels.empty()) return options;
  std::vector<redis::ConnectionOptions> sentinels;
  for (const auto& endpoint : options.sentinels) sentinels.push_back(coordinator_options(endpoint));
  auto master = redis::discover_master(sentinels, options.sentinel_master);
  if (!master) return Error{ErrorKind::io, "--sentinel: " + master.error().message};
  options.redis = {*master};
  return options;
}

namespace {

// The servers of the run (provide_servers), each answering before anything starts.
Result<Servers> provide_reachable_servers(const RunOptions& options, const Generation& generation,
                                          const FaultNeeds& needs) {
  auto servers = provide_servers(options, generation, needs);
  if (!servers) return servers.error();
  for (const auto& server : servers->lock)
    if (auto ok = reachable(server); !ok) return ok.error();
  if (auto ok = reachable(servers->counter); !ok) return ok.error();
  return servers;
}

// Several hosts: join the run on the oracle (multihost.h). One host: no coordinator.
Result<std::optional<HostCoordinator>> join_hosts(const RunOptions& options) {
  if (options.run_id.empty()) return std::optional<HostCoordinator>{};
  auto joined = HostCoordinator::join(oracle_config(options), options.hosts);
  if (!joined) return joined.error();
  return std::optional<HostCoordinator>{std::move(joined).value()};
}

// No lock left from an earlier run, the counter from zero. Once per run: with
// several hosts, the first to arrive does it.
Status start_from_clean_slate(const RunOptions& options, const Servers& servers, CounterResource& counter,
                              std::optional<HostCoordinator>& coordinator) {
  auto clean_slate = [&]() -> Status {
    for (const auto& server : servers.lock) (void)ask(server, {"DEL", options.key});
    if (auto reset = counter.reset(); !reset) return Error{ErrorKind::io, "counter reset: " + reset.error().message};
    return Done{};
  };
  return coordinator ? coordinator->arrive(clean_slate, milliseconds{options.barrier_timeout_ms}) : clean_slate();
}

// What the nemeses may act on: the clients' history, the lock key and its servers.
NemesisContext nemesis_context(const RunOptions& options, const Servers& servers, const SharedHistory& history) {
  NemesisContext context;
  context.history = &history;
  context.key = options.key;
  context.ttl = milliseconds{options.ttl_ms};
  if (servers.topology != nullptr) context.lock_servers = servers.topology->servers();
  context.topology = servers.topology.get();
  context.endpoints = servers.lock;
  context.counter_server = servers.counter_server;
  context.current_holder = [&history] { return history.header().holder.load(); };
  return context;
}

// The clients' run, and what was read when every one of them was set up.
struct ClientsRun {
  WorkloadOutcome outcome;
  Result<std::int64_t> commands_before = Error{ErrorKind::io, "not measured"};
  Status started_together = Done{};
};

Result<ClientsRun> run_clients(const RunOptions& options, const Servers& servers, const SharedHistory& history,
                               FaultSet& nemeses, const StepNemesis& steps, NemesisContext& context,
                               std::optional<HostCoordinator>& coordinator) {
  ClientsRun run;
  // Server commands are counted from the moment every client is set up.
  auto snapshot = [&] {
    if (coordinator)  // every host's clients are ready
      run.started_together = coordinator->start_barrier(milliseconds{options.barrier_timeout_ms});
    run.commands_before = commands_served(servers.lock);
  };
  WorkloadConfig workload = workload_config(options, servers);
  workload.fault_allowance = nemeses.allowance(context.ttl) + steps.allowance(context.ttl);
  if (coordinator) workload.oracle = oracle_config(options);
  auto outcome = run_workload(workload, history, nemeses, context, snapshot);
  if (!outcome) return outcome.error().kind == ErrorKind::usage ? Error{ErrorKind::io, outcome.error().message}
                                                                 : outcome.error();
  run.outcome = std::move(outcome).value();
  return run;
}

// What the run left behind, read once the clients are done.
struct RunEnd {
  Status finished_together = Done{};
  std::vector<CsRecord> records;
  Tally tally;
  Result<std::int64_t> commands_after = Error{ErrorKind::io, "not measured"};
  Result<long long> counter_final = Error{ErrorKind::io, "not read"};
  std::int64_t confirmed = 0;  // critical sections whose counter write was acknowledged
};

RunEnd read_run_end(const RunOptions& options, const Servers& servers, const SharedHistory& history,
                    const WorkloadOutcome& outcome, CounterResource& counter,
                    std::optional<HostCoordinator>& coordinator) {
  RunEnd end;
  // Several hosts: the counter is final once every host is done.
  if (coordinator) end.finished_together = coordinator->end_barrier(milliseconds{options.barrier_timeout_ms});
  end.records = history.records();
  end.tally = tally_clients(history, outcome, options.mode);
  end.commands_after = commands_served(servers.lock);
  end.counter_final = counter.value();
  for (const auto& record : end.records) end.confirmed += record.write == CsWrite::written ? 1 : 0;
  return end;
}

Safety check_run_safety(const RunOptions& options, const Generation& generation, const Servers& servers,
                        const SharedHistory& history, const WorkloadOutcome& outcome, const RunEnd& end,
                        bool several_hosts) {
  SafetyInput input;
  input.records = end.records;
  input.clients = end.tally.spans;
  input.run_start_ns = outcome.go_ns;
  input.stall_threshold_ns = static_cast<std::int64_t>(effective_stall_ms(options)) * 1'000'000;
  input.confirmed_increments = end.confirmed;
  // An unreadable counter proves nothing either way: no lost-update claim (the verdict becomes error).
  input.counter_growth = end.counter_final ? *end.counter_final : end.confirmed;
  // Other hosts' increments are in the shared counter too: only `locklab merge` can judge it.
  if (several_hosts) input.counter_growth = end.confirmed;
  input.lock_has_keys = generation.capabilities.uses_redis;
  input.keys_left = keys_left(servers.lock, options.key);
  input.stale_writes_rejected = end.tally.stale;
  input.live_max_occupancy = history.header().max_occupancy.load();
  return check_safety(input);
}

// The safety verdict, overruled by "error" when the run could not measure.
Verdict judge_run(const Safety& safety, const WorkloadOutcome& outcome, const RunEnd& end) {
  Verdict verdict = judge(safety);
  if (const auto errors = measurement_errors(end.tally, outcome, end.counter_final); !errors.empty()) {
    verdict.verdict = "error";
    verdict.reasons.insert(verdict.reasons.begin(), errors.begin(), errors.end());
  }
  return verdict;
}

// Several hosts: both barriers must have held, and the oracle must have seen
// one holder at a time across all of them.
void judge_across_hosts(Verdict& verdict, const Result<OracleReading>& reading, const ClientsRun& run,
                        const RunEnd& end, const std::string& run_id) {
  for (const Status* barrier : {&run.started_together, &end.finished_together})
    if (!*barrier) {
      verdict.verdict = "error";
      verdict.reasons.insert(verdict.reasons.begin(), "barrier: " + barrier->error().message);
    }
  if (!reading) {
    verdict.verdict = "error";
    verdict.reasons.insert(verdict.reasons.begin(), "cannot read the oracle: " + reading.error().message);
  } else if (reading->max_occupancy > 1) {
    if (verdict.verdict != "error") verdict.verdict = "violation";
    verdict.reasons.push_back("the oracle saw " + std::to_string(reading->max_occupancy) +
                              " holders at once across the hosts of run " + run_id);
  }
}

// An asked-for fault that did not act leaves the run without what it was
// asked to show: whatever the checker found, the verdict is error, with one
// reason per such fault first (docs/harness.md, "Faults that did not act").
// Read after the run: a fault knows whether it acted once after_run() ran.
void judge_faults_acted(Verdict& verdict, const FaultSet& faults) {
  std::vector<std::string> reasons;
  for (const auto& fault : faults.faults())
    if (!fault->acted())
      reasons.push_back("fault " + fault->record().value("spec", fault->name()) + " did not act: " + fault->why_not_acted());
  if (reasons.empty()) return;
  verdict.verdict = "error";
  verdict.reasons.insert(verdict.reasons.begin(), reasons.begin(), reasons.end());
}

Metrics run_metrics(const WorkloadOutcome& outcome, const RunEnd& end) {
  MetricsInput input;
  input.records = end.records;
  input.per_client_acquired = end.tally.per_client;
  input.open_waits_ns = end.tally.open_waits;
  input.acquired = end.tally.acquired;
  input.elapsed_ns = outcome.end_ns - outcome.go_ns;
  return compute_metrics(input);
}

}  // namespace

Result<nlohmann::json> measure(const RunOptions& given, Nemesis* nemesis) {
  if (auto problem = validate(given)) return Error{ErrorKind::usage, *problem};
  auto resolved = resolve_sentinel_master(given);
  if (!resolved) return resolved.error();
  const RunOptions& options = *resolved;
  const Generation& generation = *find_generation(options.lock);

  // Every nemesis of the run in one set: the --fault specs, the --step
  // actions, and the caller's own (scenarios, tests). Built first: the
  // servers are laid out as the faults need them.
  auto faults = make_faults(options);
  if (!faults) return faults.error();
  auto servers = provide_reachable_servers(options, generation, (*faults)->needs());
  if (!servers) return servers.error();
  auto joined = join_hosts(options);
  if (!joined) return joined.error();
  std::optional<HostCoordinator>& coordinator = *joined;
  CounterResource counter(servers->counter);
  if (auto clean = start_from_clean_slate(options, *servers, counter, coordinator); !clean) return clean.error();

  std::string why;
  auto history = SharedHistory::create(options.clients, record_capacity(options), &why);
  if (!history) return Error{ErrorKind::io, why};
  FaultSet& nemeses = **faults;
  StepNemesis steps(options.steps);
  if (!options.steps.empty()) nemeses.also(steps);
  if (nemesis != nullptr) nemeses.also(*nemesis);
  NemesisContext context = nemesis_context(options, *servers, *history);
  auto run = run_clients(options, *servers, *history, nemeses, steps, context, coordinator);
  if (!run) return run.error();
  const WorkloadOutcome& outcome = run->outcome;

  const RunEnd end = read_run_end(options, *servers, *history, outcome, counter, coordinator);
  const Safety safety =
      check_run_safety(options, generation, *servers, *history, outcome, end, coordinator.has_value());
  Verdict verdict = judge_run(safety, outcome, end);
  Result<OracleReading> reading = Error{ErrorKind::io, "not a multi-host run"};
  if (coordinator) {
    reading = coordinator->reading();
    judge_across_hosts(verdict, reading, *run, end, options.run_id);
  }
  judge_faults_acted(verdict, nemeses);
  const Metrics metrics = run_metrics(outcome, end);

  std::optional<std::int64_t> final_value, served;
  if (end.counter_final) final_value = *end.counter_final;
  if (end.commands_after && run->commands_before) served = *end.commands_after - *run->commands_before;
  const ServerFacts facts = server_facts(*servers);
  Findings findings{generation,    facts,       outcome,     end.tally,
                    end.records,   safety,      verdict,     metrics,
                    end.confirmed, final_value, served,      nemeses.name(),
                    nemeses.record(), unavailability_after_crashes(outcome.crashed_ns, end.records, outcome.end_ns)};
  auto document = run_document(options, findings);
  if (coordinator) document["multihost"] = multihost_block(options, reading, final_value, end.confirmed);
  return document;
}

}  // namespace locklab::harness
