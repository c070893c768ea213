#include "run.h"

#include <sys/utsname.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <thread>

#include "checker.h"
#include "counter_resource.h"
#include "metrics.h"
#include "redis_server.h"
#include "registry.h"
#include "results.h"

namespace locklab::harness {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// Connections the coordinator itself uses: short timeouts, a bad endpoint must fail fast.
redis::ConnectionOptions coordinator_options(const redis::Endpoint& endpoint) {
  redis::ConnectionOptions options;
  options.endpoint = endpoint;
  options.connect_timeout = milliseconds{1000};
  options.command_timeout = milliseconds{2000};
  return options;
}

Result<redis::Reply> ask(const redis::ConnectionOptions& server, const redis::Args& args) {
  auto connection = redis::Connection::connect(server);
  if (!connection) return connection.error();
  return connection->command(args);
}

Status reachable(const redis::ConnectionOptions& server) {
  auto reply = ask(server, {"PING"});
  if (!reply) return Error{reply.error().kind, "cannot reach Redis at " + server.endpoint.to_string() + ": " +
                                                   reply.error().message};
  if (!reply->is_status("PONG"))
    return Error{ErrorKind::reply, "Redis at " + server.endpoint.to_string() + " answered PING with " + reply->describe()};
  return Done{};
}

Result<std::int64_t> commands_served(const std::vector<redis::ConnectionOptions>& servers) {
  std::int64_t total = 0;
  for (const auto& server : servers) {
    auto reply = ask(server, {"INFO", "commandstats"});
    if (!reply) return reply.error();
    auto calls = parse_commandstats_calls(reply->text());
    if (!calls) return Error{ErrorKind::protocol, "unreadable INFO commandstats from " + server.endpoint.to_string()};
    total += *calls;
  }
  return total;
}

KeysLeft keys_left(const std::vector<redis::ConnectionOptions>& servers, const std::string& key) {
  KeysLeft left;
  for (const auto& server : servers) {
    auto reply = ask(server, {"PTTL", key});
    if (!reply || !reply->is_integer() || reply->integer() == -2) continue;
    ++left.keys;
    if (reply->integer() == -1) ++left.without_ttl;
  }
  return left;
}

// Our own servers, when no --redis: lock servers + one counter server that no
// fault will ever touch (the resource is not what is under test).
struct Servers {
  ServerList owned;
  std::vector<redis::ConnectionOptions> lock;
  redis::ConnectionOptions counter;
  RedisServer* counter_server = nullptr;
  bool counter_shared = false;  // the counter lives on a lock server
};

Result<Servers> provide_servers(const RunOptions& options, const Generation& generation) {
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
  // With the failover guard on, the lock server gets replicas to WAIT for; the
  // clients talk to the master only (servers.owned[0]).
  auto started = options.wait_replicas > 0 ? start_master_with_replicas(static_cast<std::size_t>(options.wait_replicas))
                                           : start_masters(lock_count);
  if (!started) return Error{ErrorKind::io, "cannot start redis-server: " + started.error().message};
  auto counter_server = RedisServer::start();
  if (!counter_server) return Error{ErrorKind::io, "cannot start redis-server: " + counter_server.error().message};
  servers.owned = std::move(started).value();
  servers.owned.push_back(std::move(counter_server).value());
  for (std::size_t i = 0; i < lock_count; ++i) servers.lock.push_back(servers.owned[i]->connection_options());
  servers.counter_server = servers.owned.back().get();
  servers.counter = servers.counter_server->connection_options();
  return servers;
}

std::string kernel() {
  utsname name{};
  if (::uname(&name) != 0) return "unknown";
  return std::string(name.sysname) + " " + name.release;
}

json quantiles_json(const Quantiles& q) {
  return {{"p50", q.p50}, {"p90", q.p90}, {"p99", q.p99}, {"max", q.max}, {"count", q.count}};
}

json config_json(const RunOptions& options, const Generation& generation) {
  json endpoints = json::array();
  for (const auto& endpoint : options.redis) endpoints.push_back(endpoint.to_string());
  return {{"lock", options.lock},
          {"clients", options.clients},
          {"ops", options.ops ? json(*options.ops) : json(nullptr)},
          {"duration_s", options.ops ? json(nullptr) : json(options.duration_s)},
          {"hold_ms", options.hold_ms},
          {"ttl_ms", options.ttl_ms},
          {"wait_ms", options.wait_ms},
          {"retry_ms", options.retry_ms},
          {"mode", options.mode == ClientMode::process ? "process" : "thread"},
          {"redis", endpoints},
          {"counter_redis", options.counter_redis ? json(options.counter_redis->to_string()) : json(nullptr)},
          {"nodes", generation.capabilities.multi_node ? (options.redis.empty() ? options.nodes : static_cast<int>(options.redis.size()))
                                          : (generation.capabilities.uses_redis ? 1 : 0)},
          {"wait_replicas", options.wait_replicas},
          {"wait_replicas_timeout_ms", options.wait_replicas_timeout_ms},
          {"key", options.key},
          {"seed", options.seed},
          {"stall_ms", options.stall_ms > 0 ? options.stall_ms : 3 * options.ttl_ms},
          {"step", options.step_specs},
          {"json", options.json_path.empty() ? json(nullptr) : json(options.json_path)},
          {"command", options.command},
          {"expect_safe", options.expect_safe}};
}

// A window of the history for the timeline picture: around the first overlap
// when there is one, else the start. Times in ms since the barrier opened.
json timeline_json(const std::vector<CsRecord>& records, const OverlapSummary& overlaps, std::int64_t go_ns,
                   std::int64_t end_ns, int clients) {
  constexpr std::size_t kMaxSections = 400;
  std::size_t first = 0;
  if (overlaps.first_overlap_ns >= 0) {
    while (first < records.size() && records[first].enter_ns < overlaps.first_overlap_ns) ++first;
    first = first > 20 ? first - 20 : 0;
  }
  const std::size_t last = std::min(records.size(), first + kMaxSections);
  std::vector<CsRecord> window(records.begin() + static_cast<std::ptrdiff_t>(first),
                               records.begin() + static_cast<std::ptrdiff_t>(last));
  auto ms = [go_ns](std::int64_t ns) { return std::round(static_cast<double>(ns - go_ns) / 1e4) / 100.0; };
  json sections = json::array();
  for (const auto& section : window)
    sections.push_back({section.client, ms(section.enter_ns), ms(section.exit_ns), section.write == CsWrite::refused ? 1 : 0});
  json spans = json::array();
  for (const auto& span : overlap_spans(effective_sections(window))) spans.push_back({ms(span.from_ns), ms(span.to_ns)});
  return {{"clients", clients},
          {"run_ms", ms(end_ns)},
          {"sections_total", records.size()},
          {"first_section", first},
          {"sections", sections},
          {"overlaps", spans},
          {"columns", {"client", "enter_ms", "exit_ms", "fenced_off"}}};
}

}  // namespace

std::optional<std::vector<redis::Endpoint>> parse_endpoints(const std::string& text, std::string* why) {
  std::vector<redis::Endpoint> endpoints;
  std::stringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    auto endpoint = redis::Endpoint::parse(part);
    if (!endpoint || endpoint->port <= 0 || endpoint->port > 65535) {
      if (why) *why = "bad Redis address '" + part + "' (expected HOST:PORT)";
      return std::nullopt;
    }
    endpoints.push_back(*endpoint);
  }
  if (endpoints.empty()) {
    if (why) *why = "--redis needs at least one HOST:PORT";
    return std::nullopt;
  }
  return endpoints;
}

std::optional<std::int64_t> parse_commandstats_calls(std::string_view info) {
  std::int64_t total = 0;
  std::size_t start = 0;
  while (start < info.size()) {
    auto end = info.find('\n', start);
    if (end == std::string_view::npos) end = info.size();
    std::string_view line = info.substr(start, end - start);
    start = end + 1;
    if (!line.starts_with("cmdstat_")) continue;
    if (line.starts_with("cmdstat_info:")) continue;  // our own before/after probes
    const auto calls = line.find("calls=");
    if (calls == std::string_view::npos) return std::nullopt;
    std::int64_t n = 0;
    const char* first = line.data() + calls + 6;
    const auto [ptr, ec] = std::from_chars(first, line.data() + line.size(), n);
    if (ec != std::errc{}) return std::nullopt;
    total += n;
  }
  return total;
}

std::optional<std::string> invalid_run_options(const RunOptions& options) {
  const Generation* generation = find_generation(options.lock);
  if (generation == nullptr) return "unknown lock '" + options.lock + "' (see: locklab list)";
  if (options.clients < 1 || options.clients > 256) return "--clients must be between 1 and 256";
  if (options.ops && *options.ops < 1) return "--ops must be >= 1";
  if (!options.ops && !(options.duration_s > 0 && options.duration_s <= 3600)) return "--duration must be in (0, 3600] s";
  if (options.hold_ms < 0) return "--hold must be >= 0 ms";
  if (options.ttl_ms < 1) return "--ttl must be >= 1 ms";
  if (options.wait_ms < 0) return "--wait must be >= 0 ms";
  if (options.retry_ms < 0) return "--retry must be >= 0 ms";
  if (options.nodes < 1 || options.nodes > 15) return "--nodes must be between 1 and 15";
  if (options.stall_ms < 0) return "--stall must be >= 0 ms";
  if (options.key.empty()) return "--key must not be empty";
  // Bounds that keep every derived time (3 x ttl, wait + ttl, deadlines) far from overflow.
  if (options.ttl_ms > 86'400'000) return "--ttl must be <= 86400000 ms (one day)";
  if (options.wait_ms > 86'400'000) return "--wait must be <= 86400000 ms (one day)";
  if (options.stall_ms > 86'400'000) return "--stall must be <= 86400000 ms (one day)";
  if (options.hold_ms > 3'600'000) return "--hold must be <= 3600000 ms";
  if (options.ops && *options.ops > 100'000'000) return "--ops must be <= 100000000";
  for (const auto& step : options.steps) {
    if (step.client >= options.clients)
      return "--step " + step.point + ": client " + std::to_string(step.client) + " does not exist (--clients " +
             std::to_string(options.clients) + ")";
    // In thread mode the clients share the coordinator's process: stopping or
    // exiting it would stop or end the whole run.
    if (options.mode == ClientMode::thread && step.kind != StepAction::Kind::delay)
      return "--step pause/crash need --mode process (a thread cannot stop or die alone)";
  }
  if (options.wait_replicas < 0 || options.wait_replicas > 5) return "--wait-replicas must be between 0 and 5";
  if (options.wait_replicas_timeout_ms < 1) return "--wait-replicas-timeout must be >= 1 ms";
  if (options.wait_replicas > 0 && !generation->capabilities.honours_wait_replicas)
    return "--wait-replicas applies to lua-safe-delete and reentrant-watchdog, not " + options.lock;
  return std::nullopt;
}

namespace {

WorkloadConfig workload_config(const RunOptions& options, const Servers& servers) {
  WorkloadConfig workload;
  workload.lock_name = options.lock;
  workload.lock.key = options.key;
  workload.lock.ttl = milliseconds{options.ttl_ms};
  workload.lock.retry_interval = milliseconds{options.retry_ms};
  workload.lock.wait_replicas = options.wait_replicas;
  workload.lock.wait_replicas_timeout = milliseconds{options.wait_replicas_timeout_ms};
  for (const auto& server : servers.lock) {
    redis::ConnectionOptions client = server;
    // A lock may legitimately block up to its wait (+ a lease) on one call.
    client.command_timeout = milliseconds{std::max(2000, options.wait_ms + options.ttl_ms)};
    workload.lock.servers.push_back(client);
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

// Everything the clients counted, summed over their slots.
struct Tally {
  std::int64_t attempts = 0, acquired = 0, timeouts = 0, errors = 0, unknown = 0, release_errors = 0;
  std::int64_t stale = 0, counter_errors = 0, round_trips = 0, commands = 0, leases_lost = 0;
  std::optional<NodeTally> nodes;
  bool truncated = false;
  std::vector<std::int64_t> per_client, open_waits;
  std::vector<ClientSpan> spans;
  std::string last_error;
};

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
  return errors;
}

// What the run saw, gathered for the document.
struct Findings {
  const Generation& generation;
  const Servers& servers;
  const WorkloadOutcome& outcome;
  const Tally& tally;
  const std::vector<CsRecord>& records;
  const Safety& safety;
  const Verdict& verdict;
  const Metrics& metrics;
  std::int64_t confirmed = 0;
  std::optional<std::int64_t> counter_final;
  std::optional<std::int64_t> served;
  std::string nemesis;
};

json run_document(const RunOptions& options, const Findings& f) {
  const std::int64_t acquired = f.tally.acquired;
  auto per_acquisition = [acquired](std::int64_t n) {
    return acquired > 0 ? static_cast<double>(n) / static_cast<double>(acquired) : 0.0;
  };
  auto optional = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); };
  json endpoints = json::array();
  for (const auto& server : f.servers.lock) endpoints.push_back(server.endpoint.to_string());
  json stalls = json::array();
  for (const auto& stall : f.safety.stalls)
    stalls.push_back({{"from_ms", (stall.from_ns - f.outcome.go_ns) / 1'000'000},
                      {"to_ms", (stall.to_ns - f.outcome.go_ns) / 1'000'000}});
  const auto& version_source = f.servers.lock.empty() ? f.servers.counter : f.servers.lock.front();
  const auto& t = f.tally;
  json node_tally = nullptr;
  if (t.nodes)
    node_tally = {{"voted_for", t.nodes->voted_for}, {"voted_against", t.nodes->voted_against},
                  {"errored", t.nodes->errored}, {"timed_out", t.nodes->timed_out}};

  return {
      {"schema", kRunSchema},
      {"lock", options.lock},
      {"generation", {{"number", f.generation.number}, {"summary", f.generation.summary}, {"race", f.generation.race},
                      {"uses_redis", f.generation.capabilities.uses_redis}, {"multi_node", f.generation.capabilities.multi_node}}},
      {"config", config_json(options, f.generation)},
      {"redis", {{"version", server_version(version_source)},
                 {"endpoints", endpoints},
                 {"counter_endpoint", f.servers.counter.endpoint.to_string()},
                 {"counter_shared_with_lock_server", f.servers.counter_shared},
                 {"own_servers", options.redis.empty()}}},
      {"machine", {{"cores", std::thread::hardware_concurrency()}, {"kernel", kernel()}}},
      {"duration_s", static_cast<double>(f.outcome.end_ns - f.outcome.go_ns) / 1e9},
      {"totals", {{"attempts", t.attempts}, {"acquired", t.acquired}, {"timeouts", t.timeouts}, {"errors", t.errors},
                  {"unknown", t.unknown}, {"release_errors", t.release_errors}, {"counter_errors", t.counter_errors},
                  {"crashed_clients", f.outcome.crashed_clients}, {"killed_clients", f.outcome.killed_clients},
                  {"history_truncated", t.truncated}}},
      {"throughput", {{"acquisitions_per_s", f.metrics.acquisitions_per_s}}},
      {"latency", {{"acquire_us", quantiles_json(f.metrics.acquire_us)}, {"wait_us", quantiles_json(f.metrics.wait_us)},
                   {"hold_us", quantiles_json(f.metrics.hold_us)}}},
      {"handoff_us", quantiles_json(f.metrics.handoff_us)},
      {"fairness", {{"jain", f.metrics.jain}, {"max_wait_us", f.metrics.max_wait_us},
                    {"per_client_acquired", f.metrics.per_client_acquired}}},
      {"cost", {{"round_trips_per_acquisition", per_acquisition(t.round_trips)},
                {"commands_sent_per_acquisition", per_acquisition(t.commands)},
                {"server_commands_per_acquisition", f.served ? json(per_acquisition(*f.served)) : json(nullptr)},
                {"round_trips", t.round_trips}, {"commands_sent", t.commands}, {"server_commands", optional(f.served)}}},
      {"counter", {{"expected", f.confirmed}, {"actual", optional(f.counter_final)}, {"start", 0},
                   {"final", optional(f.counter_final)}, {"unconfirmed_writes", t.counter_errors}}},
      {"safety", {{"overlaps", f.safety.overlaps.pairs},
                  {"overlaps_fenced_off", f.safety.overlaps_fenced_off},
                  {"max_concurrent_holders", f.safety.overlaps.max_concurrent},
                  {"overlap_ms", static_cast<double>(f.safety.overlaps.overlap_ns) / 1e6},
                  {"lost_updates", f.safety.lost_updates},
                  {"wrong_owner_releases", f.safety.wrong_owner_releases},
                  {"stalls", f.safety.stalls.size()},
                  {"stall_spans", stalls},
                  {"keys_left", f.safety.keys_left.keys},
                  {"keys_left_without_ttl", f.safety.keys_left.without_ttl},
                  {"stale_writes_rejected", f.safety.stale_writes_rejected}}},
      {"leases_lost", t.leases_lost},
      {"node_tally", node_tally},
      {"nemesis", f.nemesis},
      {"verdict", f.verdict.verdict},
      {"verdict_reasons", f.verdict.reasons},
      {"timeline", timeline_json(f.records, f.safety.overlaps, f.outcome.go_ns, f.outcome.end_ns, options.clients)},
  };
}

}  // namespace

Result<nlohmann::json> measure(const RunOptions& options, Nemesis* nemesis) {
  if (auto problem = invalid_run_options(options)) return Error{ErrorKind::usage, *problem};
  const Generation& generation = *find_generation(options.lock);

  auto servers = provide_servers(options, generation);
  if (!servers) return servers.error();
  for (const auto& server : servers->lock)
    if (auto ok = reachable(server); !ok) return ok.error();
  if (auto ok = reachable(servers->counter); !ok) return ok.error();

  // A clean slate: no lock left from an earlier run, counter from zero.
  for (const auto& server : servers->lock) (void)ask(server, {"DEL", options.key});
  CounterResource counter(servers->counter);
  if (auto reset = counter.reset(); !reset) return Error{ErrorKind::io, "counter reset: " + reset.error().message};

  std::string why;
  auto history = SharedHistory::create(options.clients, record_capacity(options), &why);
  if (!history) return Error{ErrorKind::io, why};

  Nemesis none;
  StepNemesis steps(options.steps);
  Nemesis& active = nemesis != nullptr ? *nemesis : options.steps.empty() ? none : steps;
  NemesisContext context;
  for (std::size_t i = 0; i < servers->lock.size() && i < servers->owned.size(); ++i)
    context.lock_servers.push_back(servers->owned[i].get());
  context.endpoints = servers->lock;
  context.counter_server = servers->counter_server;
  const SharedHistory& shared = *history;
  context.current_holder = [&shared] { return shared.header().holder.load(); };

  // Server commands are counted from the moment every client is set up.
  Result<std::int64_t> before = Error{ErrorKind::io, "not measured"};
  auto snapshot = [&] { before = commands_served(servers->lock); };
  auto outcome = run_workload(workload_config(options, *servers), *history, active, context, snapshot);
  if (!outcome) return outcome.error().kind == ErrorKind::usage ? Error{ErrorKind::io, outcome.error().message}
                                                                 : outcome.error();

  // --- judge ------------------------------------------------------------------
  const auto records = history->records();
  const Tally tally = tally_clients(*history, *outcome, options.mode);
  auto after = commands_served(servers->lock);
  const auto counter_final = counter.value();
  std::int64_t confirmed = 0;
  for (const auto& record : records) confirmed += record.write == CsWrite::written ? 1 : 0;

  SafetyInput safety_input;
  safety_input.records = records;
  safety_input.clients = tally.spans;
  safety_input.run_start_ns = outcome->go_ns;
  safety_input.stall_threshold_ns =
      static_cast<std::int64_t>(options.stall_ms > 0 ? options.stall_ms : 3 * options.ttl_ms) * 1'000'000;
  safety_input.confirmed_increments = confirmed;
  // An unreadable counter proves nothing either way: no lost-update claim (the verdict becomes error).
  safety_input.counter_growth = counter_final ? *counter_final : confirmed;
  safety_input.lock_has_keys = generation.capabilities.uses_redis;
  safety_input.keys_left = keys_left(servers->lock, options.key);
  safety_input.stale_writes_rejected = tally.stale;
  safety_input.live_max_occupancy = history->header().max_occupancy.load();
  const Safety safety = check_safety(safety_input);
  Verdict verdict = judge(safety);
  if (const auto errors = measurement_errors(tally, *outcome, counter_final); !errors.empty()) {
    verdict.verdict = "error";
    verdict.reasons.insert(verdict.reasons.begin(), errors.begin(), errors.end());
  }

  MetricsInput metrics_input;
  metrics_input.records = records;
  metrics_input.per_client_acquired = tally.per_client;
  metrics_input.open_waits_ns = tally.open_waits;
  metrics_input.acquired = tally.acquired;
  metrics_input.elapsed_ns = outcome->end_ns - outcome->go_ns;
  const Metrics metrics = compute_metrics(metrics_input);

  std::optional<std::int64_t> final_value, served;
  if (counter_final) final_value = *counter_final;
  if (after && before) served = *after - *before;
  const Findings findings{generation, *servers, *outcome, tally,       records, safety,
                          verdict,    metrics,  confirmed, final_value, served,  active.name()};
  return run_document(options, findings);
}

}  // namespace locklab::harness
