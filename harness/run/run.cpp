#include "run/run.h"

#include <algorithm>

#include "history/checker.h"
#include "history/metrics.h"
#include "nemesis/fault_registry.h"
#include "nemesis/step_actions.h"
#include "resource/counter_resource.h"
#include "run/host_judgment.h"
#include "run/lease_witness.h"
#include "run/oracle_side.h"
#include "run/redis_section_oracle.h"
#include "run/run_document.h"
#include "run/run_locks.h"
#include "run/run_servers.h"
#include "servers/lock_server_layout.h"
#include "servers/redis_server.h"
#include "servers/server_stats.h"
#include "workload/adapter_probe.h"

namespace locklab::harness {
namespace {

using std::chrono::milliseconds;

// Adapters start in every client at once before the barrier: an interpreter
// each (node's takes ~0.3 s of CPU), on a machine that may have 2 cores.
milliseconds adapter_setup_bound(const std::vector<RunLock>& locks) {
  int adapters = 0;
  for (const auto& member : locks) adapters += member.lock.is_adapter() ? member.clients : 0;
  return adapters == 0 ? milliseconds{0} : milliseconds{10'000 + 500 * adapters};
}

WorkloadConfig workload_config(const RunOptions& options, const RunServers& servers,
                               const std::vector<RunLock>& locks) {
  WorkloadConfig workload;
  workload.lock_name = options.lock;
  workload.make_lock = client_lock_maker(locks);
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
  workload.setup_timeout = std::max(workload.setup_timeout, adapter_setup_bound(locks));
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
    t.blocked_calls += slot.blocked_calls;
    t.blocked_acquires += slot.blocked_acquires;
    if (slot.blocked_calls > 0 && (t.blocked_what.empty() || slot.blocked_longest_ms > t.blocked_longest_ms)) {
      t.blocked_longest_ms = slot.blocked_longest_ms;
      t.blocked_what = slot.blocked_what;
    }
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
    t.kept_out.push_back(slot.open_wait_ns > 0 || slot.timeouts > 0);
    t.spans.push_back({slot.started_ns, slot.finished_ns > 0 ? slot.finished_ns.load() : outcome.end_ns, slot.died_ns});
    if (slot.last_error[0] != '\0') t.last_error = slot.last_error;
  }
  if (mode == ClientMode::thread) {  // traffic is process-wide: the coordinator measured it once
    t.round_trips = static_cast<std::int64_t>(outcome.thread_traffic.round_trips);
    t.commands = static_cast<std::int64_t>(outcome.thread_traffic.commands);
  }
  return t;
}

// Why the run could not measure (empty = it could).
constexpr std::string_view kNoAcquisition = "no acquisition succeeded; ";

std::vector<std::string> measurement_errors(const Tally& t, const WorkloadOutcome& outcome,
                                            const Result<long long>& counter_final) {
  std::vector<std::string> errors = outcome.failures;  // "client N: <why>", e.g. an adapter that broke
  if (!counter_final) errors.push_back("cannot read the counter at the end: " + counter_final.error().message);
  // A blocked acquire is the library's finding (liveness, judge_run), not a failure to measure;
  // only those were counted unknown (a blocked release is no attempt), so only they come off.
  if (t.acquired == 0 && t.errors + t.unknown - t.blocked_acquires > 0)
    errors.push_back(std::string(kNoAcquisition) + std::to_string(t.errors + t.unknown) + " attempts failed (" +
                     t.last_error + ")");
  if (outcome.killed_clients > 0)
    errors.push_back(std::to_string(outcome.killed_clients) +
                     " client(s) did not finish by the hard deadline (processes are killed, threads waited for)");
  const bool all_said = outcome.failures.size() >= static_cast<std::size_t>(outcome.failed_clients);
  if (outcome.failed_clients > 0)
    errors.push_back(std::to_string(outcome.failed_clients) + " client(s) failed during the run (" +
                     (all_said ? "why: above" : "an error or exception, see stderr") +
                     "): their sections are missing");
  return errors;
}

// Every adapter of the run, probed once by the coordinator (workload/adapter_probe.h).
struct AdapterProbes {
  nlohmann::json record = nlohmann::json::object();  // the document's `adapters`: lock name -> its probe
  std::string failure;                               // the first adapter that failed, one line ("" = none)
};

// The adapters' probe, before any client starts: the coordinator's own
// connections to the lock servers, the run's key and lease.
AdapterProbes probe_run_adapters(std::vector<RunLock>& locks, const RunOptions& options, const RunServers& servers,
                                 const Capabilities& laid_out) {
  LockConfig config;
  config.key = options.key;
  config.ttl = milliseconds{options.ttl_ms};
  config.servers = servers.lock;
  AdapterProbes probes;
  for (auto& member : locks) {
    if (!member.lock.is_adapter()) continue;
    ProbedAdapter probed = probe_run_adapter(member.lock, config, member.first_client, laid_out);
    probes.record[member.lock.name] = std::move(probed.record);
    if (probes.failure.empty()) probes.failure = probed.failure;
  }
  return probes;
}

// The clean slate (run_servers.h), once per run: with several hosts, the
// first to arrive makes it, and the others wait until it has.
Status clean_slate_once(const RunOptions& options, const RunServers& servers, const NemesisContext& keys,
                        CounterResource& counter, std::optional<HostCoordinator>& coordinator) {
  auto clean_slate = [&] { return start_from_clean_slate(servers, keys, counter); };
  return coordinator ? coordinator->arrive(clean_slate, milliseconds{options.barrier_timeout_ms}) : clean_slate();
}

// The lease the lock really takes: the ttl rounded up to its resolution
// (setnx-expire's EXPIRE takes whole seconds). The bites judge by it, and a
// pause that waits for the lease to end waits for it.
milliseconds lease_taken(const RunOptions& options, const Capabilities& can) {
  const int resolution = std::max(can.ttl_resolution_ms, 1);
  return milliseconds{(options.ttl_ms + resolution - 1) / resolution * resolution};
}

// What the nemeses may act on: the lock keys and their servers (the clients'
// history joins it once it exists: watch_history).
NemesisContext nemesis_context(const RunOptions& options, const std::vector<RunLock>& locks,
                               const RunServers& servers) {
  NemesisContext context;
  context.key = options.key;
  context.client_keys = client_keys(locks, options.key);
  context.ttl = milliseconds{options.ttl_ms};
  context.lease = lease_taken(options, run_capabilities(locks));
  if (servers.topology != nullptr) context.lock_servers = servers.topology->servers();
  context.topology = servers.topology.get();
  context.cluster_failover = servers.cluster_failover.get();
  context.endpoints = servers.lock;
  context.counter_server = servers.counter_server;
  return context;
}

void watch_history(NemesisContext& context, const SharedHistory& history) {
  context.history = &history;
  context.current_holder = [&history] { return history.header().holder.load(); };
}

// The run's witness: every lock server the run started, directly (not
// through the fronts or the client links: a fault must not blind it); its
// keys. RunServers the run does not own are not watched (docs/harness.md, "The
// server as witness").
std::unique_ptr<LeaseWitness> make_witness(const RunOptions& options, const RunServers& servers,
                                           const Capabilities& can, const NemesisContext& context) {
  if (!can.uses_redis) return LeaseWitness::unwatched("the lock uses no Redis server: there is no lease to watch");
  if (options.cluster)
    return LeaseWitness::unwatched("a Redis Cluster: the key's master can change under the run (failover, "
                                   "resharding), and the witness watches single servers");
  if (servers.topology == nullptr)
    return LeaseWitness::unwatched("--redis: the servers are not the run's own (others may use them, and the run "
                                   "does not change their notify-keyspace-events); the lock's own word judges leases");
  WitnessPlan plan;
  for (RedisServer* server : servers.topology->servers()) plan.nodes.push_back(server->connection_options());
  plan.keys = lock_keys(context);
  plan.key_of = [keys = context.client_keys, key = context.key](int client) {
    const auto index = static_cast<std::size_t>(client);
    return client >= 0 && index < keys.size() ? keys[index] : key;  // as lock_key_of
  };
  const int nodes = static_cast<int>(plan.nodes.size());
  plan.quorum = can.multi_node ? nodes / 2 + 1 : 1;  // a quorum lock loses its lease with a majority of its keys
  return std::make_unique<LeaseWitness>(std::move(plan));
}

// A fault or a step that reads the lock's key on its servers cannot act on a
// lock whose key nobody named (an adapter that is not shipped and whose
// init_ok has no "key"): refused before any client starts, one line. (An
// adapter that failed its probe makes the run error: that line comes first.)
std::optional<std::string> unknown_key_problem(const RunOptions& options, const std::vector<RunLock>& locks,
                                               const FaultSet& faults, const AdapterProbes& probes) {
  const auto unknown = std::find_if(locks.begin(), locks.end(), [](const RunLock& m) { return m.lock.key_pattern.empty(); });
  if (unknown == locks.end() || !probes.failure.empty()) return std::nullopt;
  std::string reader;
  for (const auto& fault : faults.faults())
    if (reader.empty() && fault->needs().lock_key) reader = "--fault " + fault->record().value("spec", fault->name());
  for (const auto& step : options.steps)
    if (reader.empty() && step.kind == StepAction::Kind::pause && step.pause.until == PauseRule::Until::expired)
      reader = "--step " + step.point + ":pause-until=expired";
  if (reader.empty()) return std::nullopt;
  return reader + ": reads the lock's key on its servers, and " + unknown->lock.label +
         " names none (an adapter says the key it locks in its init_ok's \"key\": docs/adapters.md)";
}

// The clients' run, and what was read when every one of them was set up.
struct ClientsRun {
  WorkloadOutcome outcome;
  Result<std::int64_t> commands_before = Error{ErrorKind::io, "not measured"};
  Status started_together = Done{};
};

Result<ClientsRun> run_clients(const RunOptions& options, const RunServers& servers, const std::vector<RunLock>& locks,
                               const SharedHistory& history, FaultSet& nemeses, const StepNemesis& steps,
                               NemesisContext& context, std::optional<HostCoordinator>& coordinator,
                               const std::optional<OracleSide>& oracle, LeaseWitness& witness) {
  ClientsRun run;
  // Server commands are counted from the moment every client is set up.
  auto snapshot = [&] {
    if (coordinator)  // every host's clients are ready
      run.started_together = coordinator->start_barrier(milliseconds{options.barrier_timeout_ms});
    // Before the count starts: its CONFIG SET and SUBSCRIBE are not the lock's
    // cost, and every client is forked by now.
    witness.start();
    run.commands_before = commands_served(servers.lock);
  };
  WorkloadConfig workload = workload_config(options, servers, locks);
  workload.fault_allowance = nemeses.allowance(context.ttl) + steps.allowance(context.ttl);
  if (oracle) workload.section_oracles = std::make_shared<RedisSectionOracles>(oracle->config);
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

RunEnd read_run_end(const RunOptions& options, const RunServers& servers, const SharedHistory& history,
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

Safety check_run_safety(const RunOptions& options, const Capabilities& can, const RunServers& servers,
                        const NemesisContext& context, const SharedHistory& history, const WorkloadOutcome& outcome,
                        const RunEnd& end, bool several_hosts) {
  SafetyInput input;
  input.records = end.records;
  input.clients = end.tally.spans;
  input.kept_out = end.tally.kept_out;
  input.run_start_ns = outcome.go_ns;
  input.stall_threshold_ns = static_cast<std::int64_t>(effective_stall_ms(options)) * 1'000'000;
  input.confirmed_increments = end.confirmed;
  // An unreadable counter proves nothing either way: no lost-update claim (the verdict becomes error).
  input.counter_growth = end.counter_final ? *end.counter_final : end.confirmed;
  // Other hosts' increments are in the shared counter too: only `locklab merge` can judge it.
  if (several_hosts) input.counter_growth = end.confirmed;
  input.lock_has_keys = can.uses_redis;
  input.owner_checked_release = can.owner_checked_release;
  input.lock_expires = can.expires;
  input.keys_left = lock_keys_left(servers, context);
  input.stale_writes_rejected = end.tally.stale;
  input.live_max_occupancy = history.header().max_occupancy.load();
  return check_safety(input);
}

// The safety verdict, overruled by "error" when the run could not measure.
Verdict judge_run(const Safety& safety, const WorkloadOutcome& outcome, const RunEnd& end) {
  Verdict verdict = judge(safety);
  // Findings of the library at its defaults, not errors (docs/adapters.md): a call still waiting
  // past the harness's bound would have hung the service; a dead adapter is a crashed client.
  if (end.tally.blocked_calls > 0)
    verdict.reasons.push_back(std::to_string(end.tally.blocked_calls) + " library call(s) blocked past the harness's bound (" +
                              end.tally.blocked_what + "): liveness, it would have hung the service");
  for (const auto& death : outcome.adapter_deaths) verdict.reasons.push_back(death + " (a crashed client)");
  if (const auto errors = measurement_errors(end.tally, outcome, end.counter_final); !errors.empty()) {
    verdict.verdict = "error";
    verdict.exposed = false;
    verdict.every_acquire_refused = errors.size() == 1 && errors.front().starts_with(kNoAcquisition);
    verdict.reasons.insert(verdict.reasons.begin(), errors.begin(), errors.end());
  }
  return verdict;
}

// An asked-for fault that did not act leaves the run without what it was
// asked to show: whatever the checker found, the verdict is error, with one
// reason per such fault first (docs/harness.md, "Faults that did not act").
// Read after the run: a fault knows whether it acted once after_run() ran.
// A --step action that never fired is judged the same way.
void judge_faults_acted(Verdict& verdict, const FaultSet& faults, const StepNemesis& steps) {
  std::vector<std::string> reasons;
  for (const auto& fault : faults.faults())
    if (!fault->acted())
      reasons.push_back("fault " + fault->record().value("spec", fault->name()) + " did not act: " + fault->why_not_acted());
  for (auto& line : steps.not_acted()) reasons.push_back(std::move(line));
  if (reasons.empty()) return;
  verdict.verdict = "error";
  verdict.reasons.insert(verdict.reasons.begin(), reasons.begin(), reasons.end());
}

// A fault that acted but did not bite gave the lock no race to survive: a
// `safe` verdict would claim what the run never tested, so it becomes error
// ("not exercised"). A violation, a deadlock or a liveness finding stands:
// it happened, whatever the fault's share in it (docs/harness.md, "Bite").
void judge_faults_bit(Verdict& verdict, const FaultSet& faults, const WorkloadOutcome& outcome) {
  if (!faults.acted() || faults.bit() || verdict.verdict != "safe") return;
  // A client whose adapter died on its own is a liveness finding (the service died), and it
  // stands like one: said, not turned into `error` (the matrix reads it: sweeps/cell_class_of_run.cpp).
  // Not where the fault's own schedule missed (catch=: a waiter not caught): the deaths are then
  // the undecided interleaving's, and the cell must not read them as its class.
  if (!outcome.adapter_deaths.empty() && !faults.schedule_missed()) {
    verdict.reasons.insert(verdict.reasons.begin(), "not exercised, but a client's service died: " + faults.why_not_bit());
    return;
  }
  verdict.verdict = "error";
  verdict.reasons.insert(verdict.reasons.begin(), "not exercised: " + faults.why_not_bit());
}

// The servers lost a holder's key under it, as a fault read them (DUMP before
// and after: nemesis/bite.h, KeyLoss): that section's lease is lost, whatever
// the witness could tell (a node that restarted blinded its feed). Returns the
// moments the lock became free that way, for the unavailability after them:
// the reading, not the holder's exit -- its lease was gone, so from then on the
// lock was free to anyone, and a lock that keeps a contender out while its
// holder works on without a lease is unavailable (a correct one lets the
// contender in: a violation, which the class reads first).
std::vector<std::int64_t> mark_key_losses(std::vector<CsRecord>& records, const std::vector<KeyLoss>& losses) {
  std::vector<std::int64_t> freed;
  for (const KeyLoss& loss : losses) {
    for (CsRecord& record : records) {
      if (!std::cmp_equal(record.client, loss.client) || record.enter_ns > loss.at_ns ||
          (record.exit_ns != 0 && loss.at_ns > record.exit_ns))
        continue;
      record.lease_lost = 1;
      freed.push_back(loss.at_ns);
    }
  }
  return freed;
}

// The evidence a bite is judged on, with the lease the lock really takes (lease_taken).
BiteEvidence bite_evidence(const SharedHistory& history, const RunOptions& options, const Capabilities& can) {
  return BiteEvidence::from(history, lease_taken(options, can), can.auto_extends);
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

// The clients' run; none when an adapter failed its probe (the run is then error).
Result<ClientsRun> run_or_skip(const AdapterProbes& probes, const RunOptions& options, const RunServers& servers,
                               const std::vector<RunLock>& locks, const SharedHistory& history, FaultSet& nemeses,
                               const StepNemesis& steps, NemesisContext& context,
                               std::optional<HostCoordinator>& coordinator, const std::optional<OracleSide>& oracle,
                               LeaseWitness& witness) {
  if (probes.failure.empty())
    return run_clients(options, servers, locks, history, nemeses, steps, context, coordinator, oracle, witness);
  ClientsRun skipped;
  skipped.outcome.go_ns = skipped.outcome.end_ns = monotonic_ns();
  return skipped;
}

// Everything measure() set up and ran, for the verdict and the document.
struct MeasuredRun {
  const RunOptions& options;
  std::vector<RunLock>& locks;
  const RunServers& servers;
  const NemesisContext& context;
  const SharedHistory& history;
  FaultSet& nemeses;
  const StepNemesis& steps;
  const ClientsRun& run;
  const AdapterProbes& probes;
  std::optional<HostCoordinator>& coordinator;
  CounterResource& counter;
  LeaseWitness& witness;
  bool faults_injected = false;  // --fault, --step or the caller's nemesis
};

// The oracles' and the locks' judgment of a run, and its document.
nlohmann::json judge_and_record(const MeasuredRun& m) {
  const RunOptions& options = m.options;
  const WorkloadOutcome& outcome = m.run.outcome;
  m.witness.close_reads();  // its reads all before the last server count
  RunEnd end = read_run_end(options, m.servers, m.history, outcome, m.counter, m.coordinator);
  // After the server count was read (its end marker is not the lock's cost),
  // before the checker: the leases lost are the witness's where it could tell.
  const WitnessOutcome witnessed = m.witness.finish(end.records);
  const Capabilities can = run_capabilities(m.locks);
  // Before the checker too: a bite that read the holder's key gone is server evidence of a lost lease.
  m.nemeses.judge_bites(bite_evidence(m.history, options, can));
  std::vector<std::int64_t> freed_ns = mark_key_losses(end.records, m.nemeses.key_losses());
  freed_ns.insert(freed_ns.end(), outcome.crashed_ns.begin(), outcome.crashed_ns.end());
  const Safety safety =
      check_run_safety(options, can, m.servers, m.context, m.history, outcome, end, options.hosts > 1);
  Verdict verdict = judge_run(safety, outcome, end);
  Result<OracleReading> reading = Error{ErrorKind::io, "no oracle"};
  Agreement agreement;
  const std::int64_t failed_oracle_commands = oracle_errors(m.history);
  if (m.coordinator) {
    reading = m.coordinator->reading();
    judge_across_hosts(verdict, reading, {m.run.started_together, end.finished_together}, failed_oracle_commands,
                       end.tally.last_error);
    agreement = check_agreement(verdict, safety, reading, options.hosts);
  }
  judge_faults_acted(verdict, m.nemeses, m.steps);
  judge_faults_bit(verdict, m.nemeses, outcome);
  judge_fleet(verdict, m.locks, options, m.history, m.faults_injected);
  if (!m.probes.failure.empty()) {  // no client ran: this line is the run's one answer
    verdict.verdict = "error";
    verdict.reasons.insert(verdict.reasons.begin(), m.probes.failure);
  }
  const Metrics metrics = run_metrics(outcome, end);

  std::optional<std::int64_t> final_value, served;
  if (end.counter_final) final_value = *end.counter_final;
  if (end.commands_after && m.run.commands_before)
    served = *end.commands_after - *m.run.commands_before - witnessed.commands_on_servers;
  const ServerFacts facts = server_facts(m.servers);
  const LockDescription description = run_description(m.locks);
  Findings findings{description,      facts,       outcome,     end.tally,
                    end.records,      safety,      verdict,     metrics,
                    end.confirmed,    final_value, served,      m.nemeses.name(),
                    m.nemeses.record(), unavailability_after(freed_ns, end.records, outcome.end_ns)};
  findings.adapters = m.probes.record;
  findings.fleet = fleet_json(m.locks, options, m.history);
  auto document = run_document(options, findings);
  if (!options.steps.empty()) document["step_actions"] = m.steps.record();
  document["witness"] = witnessed.block;
  if (m.coordinator) document["oracles"] = oracles_block(safety, reading, agreement, failed_oracle_commands);
  if (!options.run_id.empty()) document["multihost"] = multihost_block(options, reading, final_value, end.confirmed);
  return document;
}

}  // namespace

Result<nlohmann::json> measure(const RunOptions& given, Nemesis* nemesis) {
  if (auto problem = validate(given)) return Error{ErrorKind::usage, *problem};
  auto resolved = resolve_sentinel_master(normalized(given));
  if (!resolved) return resolved.error();
  const RunOptions& options = *resolved;
  auto locks = run_locks(options);
  if (!locks) return locks.error();
  const Capabilities laid_out = run_capabilities(*locks);

  // Every nemesis of the run in one set: the --fault specs, the --step
  // actions, and the caller's own (scenarios, tests). Built first: the
  // servers are laid out as the faults need them.
  auto faults = make_faults(options);
  if (!faults) return faults.error();
  auto servers = provide_reachable_servers(options, laid_out, (*faults)->needs());
  if (!servers) return servers.error();
  auto oracle = provide_oracle(options);
  if (!oracle) return oracle.error();
  auto joined = join_hosts(options, *oracle);
  if (!joined) return joined.error();
  std::optional<HostCoordinator>& coordinator = *joined;
  // The adapters first: one that is not shipped may name its key in init_ok.
  const AdapterProbes probes = probe_run_adapters(*locks, options, *servers, laid_out);
  NemesisContext context = nemesis_context(options, *locks, *servers);
  if (auto problem = unknown_key_problem(options, *locks, **faults, probes)) return Error{ErrorKind::usage, *problem};
  CounterResource counter(servers->counter);
  if (auto clean = clean_slate_once(options, *servers, context, counter, coordinator); !clean) return clean.error();

  std::string why;
  auto history = SharedHistory::create(options.clients, record_capacity(options), &why);
  if (!history) return Error{ErrorKind::io, why};
  FaultSet& nemeses = **faults;
  StepNemesis steps(options.steps);
  if (!options.steps.empty()) nemeses.also(steps);
  if (nemesis != nullptr) nemeses.also(*nemesis);
  watch_history(context, *history);
  const auto witness = make_witness(options, *servers, laid_out, context);
  nemeses.also(*witness);  // hears each new holder
  auto run = run_or_skip(probes, options, *servers, *locks, *history, nemeses, steps, context, coordinator, *oracle,
                         *witness);
  if (!run) return run.error();
  const bool faults_injected = !options.faults.empty() || !options.steps.empty() || nemesis != nullptr;
  return judge_and_record({options, *locks, *servers, context, *history, nemeses, steps, *run, probes, coordinator,
                           counter, *witness, faults_injected});
}

}  // namespace locklab::harness
