#include "run/run_document.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace locklab::harness {
namespace {

using nlohmann::json;

std::string kernel() {
  utsname name{};
  if (::uname(&name) != 0) return "unknown";
  return std::string(name.sysname) + " " + name.release;
}

json quantiles_json(const Quantiles& q) {
  return {{"p50", q.p50}, {"p90", q.p90}, {"p99", q.p99}, {"max", q.max}, {"count", q.count}};
}

json config_json(const RunOptions& options, const LockDescription& lock) {
  json endpoints = json::array();
  for (const auto& endpoint : options.redis) endpoints.push_back(endpoint.to_string());
  return {{"lock", options.lock},
          {"adapter", options.adapter.empty() ? json(nullptr) : json(options.adapter)},
          {"fleet", options.fleet.empty() ? json(nullptr) : json(fleet_text(options.fleet))},
          {"clients", options.clients},
          {"ops", options.ops ? json(*options.ops) : json(nullptr)},
          {"duration_s", options.ops ? json(nullptr) : json(options.duration_s)},
          {"hold_ms", options.hold_ms},
          {"ttl_ms", options.ttl_ms},
          {"wait_ms", options.wait_ms},
          {"retry_ms", options.retry_ms},
          {"mode", mode_name(options.mode)},
          // How a client finds the lock's server: directly, by slot, or by asking sentinels.
          {"topology", options.cluster ? "cluster" : options.sentinels.empty() ? "standalone" : "sentinel"},
          {"redis", endpoints},
          {"counter_redis", options.counter_redis ? json(options.counter_redis->to_string()) : json(nullptr)},
          {"nodes", lock.capabilities.multi_node ? (options.redis.empty() ? options.nodes : static_cast<int>(options.redis.size()))
                                          : (lock.capabilities.uses_redis ? 1 : 0)},
          {"wait_replicas", options.wait_replicas},
          {"wait_replicas_timeout_ms", options.wait_replicas_timeout_ms},
          {"key", options.key},
          {"seed", options.seed},
          {"stall_ms", effective_stall_ms(options)},
          {"step", options.step_specs},
          {"faults", options.faults},
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
  // Only the violating overlaps: a pair the fence refused or serialized is drawn, not marked.
  for (const auto& span : overlap_spans(violating_sections(window))) spans.push_back({ms(span.from_ns), ms(span.to_ns)});
  return {{"clients", clients},
          {"run_ms", ms(end_ns)},
          {"sections_total", records.size()},
          {"first_section", first},
          {"sections", sections},
          {"overlaps", spans},
          {"columns", {"client", "enter_ms", "exit_ms", "fenced_off"}}};
}

}  // namespace

Unavailability unavailability_after(const std::vector<std::int64_t>& freed_ns, const std::vector<CsRecord>& by_enter,
                                    std::int64_t end_ns) {
  Unavailability result;
  for (const std::int64_t freed : freed_ns) {
    if (freed <= 0) continue;
    const auto next = std::find_if(by_enter.begin(), by_enter.end(), [freed](const CsRecord& r) { return r.enter_ns > freed; });
    const bool open = next == by_enter.end();
    const double ms = static_cast<double>((open ? std::max(end_ns, freed) : next->enter_ns) - freed) / 1e6;
    if (!result.ms || ms > *result.ms) {
      result.ms = std::round(ms * 100.0) / 100.0;
      result.open = open;
    }
  }
  return result;
}

namespace {

json optional_json(const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); }

json redis_json(const RunOptions& options, const Findings& f) {
  return {{"version", f.servers.version},
          {"endpoints", json(f.servers.lock_endpoints)},
          {"counter_endpoint", f.servers.counter_endpoint},
          {"counter_shared_with_lock_server", f.servers.counter_shared},
          {"own_servers", options.redis.empty()},
          {"cluster", f.servers.cluster}};
}

json totals_json(const Findings& f) {
  const auto& t = f.tally;
  return {{"attempts", t.attempts}, {"acquired", t.acquired}, {"timeouts", t.timeouts}, {"errors", t.errors},
          {"unknown", t.unknown}, {"release_errors", t.release_errors}, {"counter_errors", t.counter_errors},
          {"crashed_clients", f.outcome.crashed_clients}, {"killed_clients", f.outcome.killed_clients},
          {"failed_clients", f.outcome.failed_clients},
          {"history_truncated", t.truncated},
          // Acquire attempts that ended without the lock (timed out, failed, unknown): gave up.
          {"abandoned", t.attempts - t.acquired}};
}

json cost_json(const Findings& f) {
  const auto& t = f.tally;
  auto per_acquisition = [acquired = t.acquired](std::int64_t n) {
    return acquired > 0 ? static_cast<double>(n) / static_cast<double>(acquired) : 0.0;
  };
  return {{"round_trips_per_acquisition", per_acquisition(t.round_trips)},
          {"commands_sent_per_acquisition", per_acquisition(t.commands)},
          {"server_commands_per_acquisition", f.served ? json(per_acquisition(*f.served)) : json(nullptr)},
          {"round_trips", t.round_trips}, {"commands_sent", t.commands}, {"server_commands", optional_json(f.served)}};
}

json safety_json(const Findings& f) {
  json stalls = json::array();
  for (const auto& stall : f.safety.stalls)
    stalls.push_back({{"from_ms", (stall.from_ns - f.outcome.go_ns) / 1'000'000},
                      {"to_ms", (stall.to_ns - f.outcome.go_ns) / 1'000'000}});
  return {{"overlaps", f.safety.overlaps.pairs},
          {"overlaps_fenced_off", f.safety.overlaps_fenced_off},
          {"overlaps_serialized_by_fence", f.safety.overlaps_serialized_by_fence},
          {"leases_lost_inside", f.safety.leases_lost.inside},
          {"leases_lost_nobody_entered", f.safety.leases_lost.nobody_entered},
          {"max_concurrent_holders", f.safety.overlaps.max_concurrent},
          {"live_max_holders", f.safety.live_max_holders},
          {"unclaimed_increments", f.safety.unclaimed_increments},
          {"overlap_ms", static_cast<double>(f.safety.overlaps.overlap_ns) / 1e6},
          {"lost_updates", f.safety.lost_updates},
          {"wrong_owner_releases", f.safety.wrong_owner_releases},
          {"released_after_loss", f.safety.released_after_loss},
          {"stalls", f.safety.stalls.size()},
          {"stall_spans", stalls},
          {"keys_left", f.safety.keys_left.looked ? json(f.safety.keys_left.keys) : json(nullptr)},
          {"keys_left_without_ttl", f.safety.keys_left.looked ? json(f.safety.keys_left.without_ttl) : json(nullptr)},
          {"stale_writes_rejected", f.safety.stale_writes_rejected},
          {"unavailability_ms", f.unavailability.ms ? json(*f.unavailability.ms) : json(nullptr)},
          {"unavailability_open", f.unavailability.open},
          {"blocked_calls", f.tally.blocked_calls},
          {"blocked_longest_ms", f.tally.blocked_longest_ms},
          {"blocked", f.tally.blocked_what},
          {"adapter_deaths", f.outcome.adapter_deaths},
          {"every_acquire_refused", f.verdict.every_acquire_refused}};
}

json node_tally_json(const Tally& t) {
  if (!t.nodes) return nullptr;
  return {{"voted_for", t.nodes->voted_for}, {"voted_against", t.nodes->voted_against},
          {"errored", t.nodes->errored}, {"timed_out", t.nodes->timed_out}};
}

}  // namespace

json run_document(const RunOptions& options, const Findings& f) {
  const auto& capabilities = f.lock.capabilities;
  return {
      {"schema", kRunSchema},
      {"lock", options.lock},
      {"generation", {{"number", f.lock.number}, {"summary", f.lock.summary}, {"race", f.lock.race},
                      {"uses_redis", capabilities.uses_redis}, {"multi_node", capabilities.multi_node}}},
      {"adapters", f.adapters},
      {"fleet", f.fleet},
      {"config", config_json(options, f.lock)},
      {"redis", redis_json(options, f)},
      {"machine", {{"cores", std::thread::hardware_concurrency()}, {"kernel", kernel()}}},
      // How a pause, a crash or a clock fault reached every process of a client (optional: older documents lack it).
      {"isolation", {{"kind", f.outcome.isolation_kind}, {"why", f.outcome.isolation_why}}},
      {"duration_s", static_cast<double>(f.outcome.end_ns - f.outcome.go_ns) / 1e9},
      {"totals", totals_json(f)},
      {"throughput", {{"acquisitions_per_s", f.metrics.acquisitions_per_s}}},
      {"latency", {{"acquire_us", quantiles_json(f.metrics.acquire_us)}, {"wait_us", quantiles_json(f.metrics.wait_us)},
                   {"hold_us", quantiles_json(f.metrics.hold_us)}}},
      {"handoff_us", quantiles_json(f.metrics.handoff_us)},
      {"fairness", {{"jain", f.metrics.jain}, {"max_wait_us", f.metrics.max_wait_us},
                    {"per_client_acquired", f.metrics.per_client_acquired}}},
      {"cost", cost_json(f)},
      {"counter", {{"expected", f.confirmed}, {"actual", optional_json(f.counter_final)}, {"start", 0},
                   {"final", optional_json(f.counter_final)}, {"unconfirmed_writes", f.safety.unconfirmed_writes}}},
      {"safety", safety_json(f)},
      {"faults", f.faults},
      {"leases_lost", f.tally.leases_lost},
      {"node_tally", node_tally_json(f.tally)},
      {"nemesis", f.nemesis},
      {"verdict", f.verdict.verdict},
      // Safe by luck: a lease was lost under a holder and nobody happened to enter.
      {"exposed", f.verdict.verdict == "safe" && f.verdict.exposed},
      {"verdict_reasons", f.verdict.reasons},
      {"timeline", timeline_json(f.records, f.safety.overlaps, f.outcome.go_ns, f.outcome.end_ns, options.clients)},
  };
}

const std::vector<std::string>& required_run_keys() {
  static const std::vector<std::string> keys = {
      "/schema", "/lock", "/config", "/redis/version", "/redis/endpoints", "/machine/cores",
      "/totals/attempts", "/totals/acquired", "/totals/timeouts", "/totals/errors", "/totals/unknown",
      "/throughput/acquisitions_per_s",
      "/latency/acquire_us/p50", "/latency/acquire_us/p90", "/latency/acquire_us/p99", "/latency/acquire_us/max",
      "/fairness/jain", "/fairness/max_wait_us", "/fairness/per_client_acquired",
      "/cost/round_trips_per_acquisition", "/cost/server_commands_per_acquisition",
      "/counter/expected", "/counter/actual",
      "/safety/overlaps", "/safety/max_concurrent_holders", "/safety/overlap_ms", "/safety/lost_updates",
      "/safety/wrong_owner_releases", "/safety/stalls", "/safety/keys_left", "/safety/stale_writes_rejected",
      "/handoff_us/p50", "/handoff_us/p90", "/leases_lost",
      "/verdict", "/verdict_reasons",
  };
  return keys;
}

std::vector<std::string> missing_run_keys(const nlohmann::json& document) {
  std::vector<std::string> missing;
  if (!document.is_object()) return {"(not a JSON object)"};
  for (const auto& key : required_run_keys())
    if (!document.contains(nlohmann::json::json_pointer(key))) missing.push_back(key);
  if (document.contains("schema") && document["schema"] != kRunSchema && document["schema"] != kRunSchemaV1)
    missing.push_back("/schema = " + std::string(kRunSchema) + " or " + kRunSchemaV1);
  return missing;
}

Result<nlohmann::json> load_run(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{ErrorKind::usage, "cannot read " + path + ": " + std::strerror(errno)};
  nlohmann::json document = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Error{ErrorKind::usage, path + " is not valid JSON"};
  const auto missing = missing_run_keys(document);
  if (!missing.empty())
    return Error{ErrorKind::usage, path + " is not a locklab run result (missing " + missing.front() + ")"};
  return document;
}

Result<std::vector<nlohmann::json>> load_runs(const std::vector<std::string>& paths) {
  std::vector<nlohmann::json> runs;
  for (const auto& path : paths) {
    auto document = load_run(path);
    if (!document) return document.error();
    runs.push_back(std::move(document).value());
  }
  return runs;
}

}  // namespace locklab::harness
