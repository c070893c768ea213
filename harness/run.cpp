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
using redis::Error;
using redis::ErrorKind;
using std::chrono::milliseconds;

// Connections the coordinator itself uses: short timeouts, a bad endpoint must fail fast.
redis::ConnectionOptions coordinator_options(const redis::Endpoint& endpoint) {
  redis::ConnectionOptions options;
  options.endpoint = endpoint;
  options.connect_timeout = milliseconds{1000};
  options.command_timeout = milliseconds{2000};
  return options;
}

redis::Result<redis::Reply> ask(const redis::ConnectionOptions& server, const redis::Args& args) {
  auto connection = redis::Connection::connect(server);
  if (!connection) return connection.error();
  return connection->command(args);
}

redis::Status reachable(const redis::ConnectionOptions& server) {
  auto reply = ask(server, {"PING"});
  if (!reply) return Error{reply.error().kind, "cannot reach Redis at " + server.endpoint.to_string() + ": " +
                                                   reply.error().message};
  if (!reply->is_status("PONG"))
    return Error{ErrorKind::reply, "Redis at " + server.endpoint.to_string() + " answered PING with " + reply->describe()};
  return redis::Done{};
}

redis::Result<std::int64_t> commands_served(const std::vector<redis::ConnectionOptions>& servers) {
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

redis::Result<Servers> provide_servers(const RunOptions& options, const Generation& generation) {
  Servers servers;
  if (!options.redis.empty()) {
    for (const auto& endpoint : options.redis) servers.lock.push_back(coordinator_options(endpoint));
    if (!generation.uses_redis) servers.lock.clear();
    servers.counter = coordinator_options(options.counter_redis.value_or(options.redis.front()));
    for (const auto& lock : servers.lock)
      if (lock.endpoint.to_string() == servers.counter.endpoint.to_string()) servers.counter_shared = true;
    return servers;
  }
  const std::size_t lock_count = !generation.uses_redis ? 0 : generation.multi_node ? options.nodes : 1;
  auto started = start_masters(lock_count + 1);
  if (!started) return Error{ErrorKind::io, "cannot start redis-server: " + started.error().message};
  servers.owned = std::move(started).value();
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
          {"nodes", generation.multi_node ? (options.redis.empty() ? options.nodes : static_cast<int>(options.redis.size()))
                                          : (generation.uses_redis ? 1 : 0)},
          {"key", options.key},
          {"seed", options.seed},
          {"stall_ms", options.stall_ms > 0 ? options.stall_ms : 3 * options.ttl_ms},
          {"step", options.step_specs},
          {"json", options.json_path.empty() ? json(nullptr) : json(options.json_path)},
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
  return std::nullopt;
}

redis::Result<nlohmann::json> measure(const RunOptions& options, Nemesis* nemesis) {
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
  const long long counter_start = 0;

  WorkloadConfig workload;
  workload.lock_name = options.lock;
  workload.lock.key = options.key;
  workload.lock.ttl = milliseconds{options.ttl_ms};
  workload.lock.retry_interval = milliseconds{options.retry_ms};
  for (const auto& server : servers->lock) {
    redis::ConnectionOptions client = server;
    client.command_timeout = milliseconds{std::max(2000, options.wait_ms + options.ttl_ms)};
    workload.lock.servers.push_back(client);
  }
  workload.counter = servers->counter;
  workload.clients = options.clients;
  workload.mode = options.mode;
  workload.ops = options.ops;
  workload.duration = milliseconds{static_cast<std::int64_t>(options.duration_s * 1000)};
  workload.hold = milliseconds{options.hold_ms};
  workload.wait = milliseconds{options.wait_ms};
  workload.progress = options.progress;

  // Records per client: --ops bounds them; a duration run gets room for a fast
  // lock (mapped lazily, untouched pages cost nothing).
  const std::size_t capacity =
      options.ops ? static_cast<std::size_t>(std::min<std::int64_t>(*options.ops, 2'000'000))
                  : static_cast<std::size_t>(std::clamp(options.duration_s * 100'000.0, 10'000.0, 2'000'000.0));
  std::string why;
  auto history = SharedHistory::create(options.clients, capacity, &why);
  if (!history) return Error{ErrorKind::io, why};

  // Server commands are counted from the moment every client is set up.
  redis::Result<std::int64_t> before = Error{ErrorKind::io, "not measured"};
  auto snapshot = [&] { before = commands_served(servers->lock); };

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

  auto outcome = run_workload(workload, *history, active, context, snapshot);
  if (!outcome) return outcome.error().kind == ErrorKind::usage ? Error{ErrorKind::io, outcome.error().message}
                                                                 : outcome.error();

  // --- collect --------------------------------------------------------------
  const auto records = history->records();
  std::int64_t attempts = 0, acquired = 0, timeouts = 0, errors = 0, unknown = 0, release_errors = 0;
  std::int64_t stale = 0, counter_errors = 0, round_trips = 0, commands = 0, leases_lost = 0;
  NodeTally tally;
  bool has_tally = false, truncated = false;
  std::vector<std::int64_t> per_client, open_waits;
  std::vector<ClientSpan> spans;
  std::string last_error;
  for (int i = 0; i < options.clients; ++i) {
    const ClientSlot& slot = history->slot(i);
    attempts += slot.attempts;
    acquired += slot.acquired;
    timeouts += slot.timeouts;
    errors += slot.errors;
    unknown += slot.unknown;
    release_errors += slot.release_errors;
    stale += slot.stale_writes_rejected;
    counter_errors += slot.counter_errors;
    round_trips += slot.round_trips;
    commands += slot.commands;
    leases_lost += slot.leases_lost;
    if (slot.has_node_tally.load() != 0) {
      has_tally = true;
      tally.voted_for += static_cast<std::uint64_t>(slot.node_voted_for.load());
      tally.voted_against += static_cast<std::uint64_t>(slot.node_voted_against.load());
      tally.errored += static_cast<std::uint64_t>(slot.node_errored.load());
      tally.timed_out += static_cast<std::uint64_t>(slot.node_timed_out.load());
    }
    truncated = truncated || slot.truncated.load() != 0;
    per_client.push_back(slot.acquired);
    if (slot.open_wait_ns > 0) open_waits.push_back(slot.open_wait_ns);
    spans.push_back({slot.started_ns, slot.finished_ns > 0 ? slot.finished_ns.load() : outcome->end_ns});
    if (slot.last_error[0] != '\0') last_error = slot.last_error;
  }
  if (options.mode == ClientMode::thread) {
    round_trips = static_cast<std::int64_t>(outcome->thread_traffic.round_trips);
    commands = static_cast<std::int64_t>(outcome->thread_traffic.commands);
  }
  auto after = commands_served(servers->lock);
  const std::int64_t served = after && before ? *after - *before : -1;
  auto counter_now = counter.value();
  const std::int64_t counter_final = counter_now ? *counter_now : -1;
  std::int64_t confirmed = 0;
  for (const auto& record : records) confirmed += record.write == CsWrite::written ? 1 : 0;

  SafetyInput safety_input;
  safety_input.records = records;
  safety_input.clients = spans;
  safety_input.run_start_ns = outcome->go_ns;
  safety_input.stall_threshold_ns = static_cast<std::int64_t>(options.stall_ms > 0 ? options.stall_ms : 3 * options.ttl_ms) * 1'000'000;
  safety_input.confirmed_increments = confirmed;
  // An unreadable counter proves nothing either way: no lost-update claim (the verdict becomes error).
  safety_input.counter_growth = counter_final >= 0 ? counter_final - counter_start : confirmed;
  safety_input.lock_has_keys = generation.uses_redis;
  safety_input.keys_left = keys_left(servers->lock, options.key);
  safety_input.stale_writes_rejected = stale;
  safety_input.live_max_occupancy = history->header().max_occupancy.load();
  const Safety safety = check_safety(safety_input);
  Verdict verdict = judge(safety);

  MetricsInput metrics_input;
  metrics_input.records = records;
  metrics_input.per_client_acquired = per_client;
  metrics_input.open_waits_ns = open_waits;
  metrics_input.acquired = acquired;
  metrics_input.elapsed_ns = outcome->end_ns - outcome->go_ns;
  const Metrics metrics = compute_metrics(metrics_input);

  // Could the run measure at all?
  std::vector<std::string> errors_found;
  if (counter_final < 0) errors_found.push_back("cannot read the counter at the end: " + counter_now.error().message);
  if (acquired == 0 && errors + unknown > 0)
    errors_found.push_back("no acquisition succeeded; " + std::to_string(errors + unknown) + " attempts failed (" +
                           last_error + ")");
  if (outcome->killed_clients > 0)
    errors_found.push_back(std::to_string(outcome->killed_clients) + " client(s) did not finish in time and were killed");
  if (!errors_found.empty()) {
    verdict.verdict = "error";
    verdict.reasons.insert(verdict.reasons.begin(), errors_found.begin(), errors_found.end());
  }

  auto per_acquisition = [acquired](std::int64_t n) {
    return acquired > 0 ? static_cast<double>(n) / static_cast<double>(acquired) : 0.0;
  };
  json endpoints = json::array();
  for (const auto& server : servers->lock) endpoints.push_back(server.endpoint.to_string());
  json stalls = json::array();
  for (const auto& stall : safety.stalls)
    stalls.push_back({{"from_ms", (stall.from_ns - outcome->go_ns) / 1'000'000},
                      {"to_ms", (stall.to_ns - outcome->go_ns) / 1'000'000}});
  const auto& version_source = servers->lock.empty() ? servers->counter : servers->lock.front();

  json document = {
      {"schema", kRunSchema},
      {"lock", options.lock},
      {"generation", {{"number", generation.number}, {"summary", generation.summary}, {"race", generation.race},
                      {"uses_redis", generation.uses_redis}, {"multi_node", generation.multi_node}}},
      {"config", config_json(options, generation)},
      {"redis", {{"version", server_version(version_source)},
                 {"endpoints", endpoints},
                 {"counter_endpoint", servers->counter.endpoint.to_string()},
                 {"counter_shared_with_lock_server", servers->counter_shared},
                 {"own_servers", options.redis.empty()}}},
      {"machine", {{"cores", std::thread::hardware_concurrency()}, {"kernel", kernel()}}},
      {"duration_s", static_cast<double>(outcome->end_ns - outcome->go_ns) / 1e9},
      {"totals", {{"attempts", attempts}, {"acquired", acquired}, {"timeouts", timeouts}, {"errors", errors},
                  {"unknown", unknown}, {"release_errors", release_errors}, {"counter_errors", counter_errors},
                  {"crashed_clients", outcome->crashed_clients}, {"killed_clients", outcome->killed_clients},
                  {"history_truncated", truncated}}},
      {"throughput", {{"acquisitions_per_s", metrics.acquisitions_per_s}}},
      {"latency", {{"acquire_us", quantiles_json(metrics.acquire_us)}, {"wait_us", quantiles_json(metrics.wait_us)},
                   {"hold_us", quantiles_json(metrics.hold_us)}}},
      {"handoff_us", quantiles_json(metrics.handoff_us)},
      {"fairness", {{"jain", metrics.jain}, {"max_wait_us", metrics.max_wait_us},
                    {"per_client_acquired", metrics.per_client_acquired}}},
      {"cost", {{"round_trips_per_acquisition", per_acquisition(round_trips)},
                {"commands_sent_per_acquisition", per_acquisition(commands)},
                {"server_commands_per_acquisition", served >= 0 ? json(per_acquisition(served)) : json(nullptr)},
                {"round_trips", round_trips}, {"commands_sent", commands},
                {"server_commands", served >= 0 ? json(served) : json(nullptr)}}},
      {"counter", {{"expected", confirmed},
                   {"actual", counter_final >= 0 ? json(counter_final - counter_start) : json(nullptr)},
                   {"start", counter_start},
                   {"final", counter_final >= 0 ? json(counter_final) : json(nullptr)}, {"unconfirmed_writes", counter_errors}}},
      {"safety", {{"overlaps", safety.overlaps.pairs},
                  {"overlaps_fenced_off", safety.overlaps_fenced_off},
                  {"max_concurrent_holders", safety.overlaps.max_concurrent},
                  {"overlap_ms", static_cast<double>(safety.overlaps.overlap_ns) / 1e6},
                  {"lost_updates", safety.lost_updates},
                  {"wrong_owner_releases", safety.wrong_owner_releases},
                  {"stalls", safety.stalls.size()},
                  {"stall_spans", stalls},
                  {"keys_left", safety.keys_left.keys},
                  {"keys_left_without_ttl", safety.keys_left.without_ttl},
                  {"stale_writes_rejected", safety.stale_writes_rejected}}},
      {"leases_lost", leases_lost},
      {"node_tally", has_tally ? json{{"voted_for", tally.voted_for}, {"voted_against", tally.voted_against},
                                      {"errored", tally.errored}, {"timed_out", tally.timed_out}}
                               : json(nullptr)},
      {"nemesis", active.name()},
      {"verdict", verdict.verdict},
      {"verdict_reasons", verdict.reasons},
      {"timeline", timeline_json(records, safety.overlaps, outcome->go_ns, outcome->end_ns, options.clients)},
  };
  return document;
}

}  // namespace locklab::harness
