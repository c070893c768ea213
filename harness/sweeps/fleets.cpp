#include "sweeps/fleets.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <sstream>

#include "registry.h"

#include "support/json_read.h"
#include "support/lock_counts.h"
#include "support/run_id.h"
#include "support/text.h"
#include "sweeps/adapter_declaration.h"
#include "sweeps/fleet_judgment.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {
namespace {

using nlohmann::json;
using LockPair = std::pair<std::string, std::string>;

constexpr int kMaxClientsEach = 128;  // two locks: 256 clients, bounds::clients

std::vector<LockPair> pairs_among(const std::vector<std::string>& locks) {
  std::vector<LockPair> pairs;
  for (std::size_t i = 0; i < locks.size(); ++i)
    for (std::size_t j = i + 1; j < locks.size(); ++j) pairs.emplace_back(locks[i], locks[j]);
  return pairs;
}

RunOptions pair_options(const FleetsOptions& options, const LockPair& locks) {
  RunOptions run = options.base;
  run.fleet = {{locks.first, options.clients_each}, {locks.second, options.clients_each}};
  run.lock.clear();
  run = normalized(std::move(run));
  run.json_path.clear();
  run.progress = false;
  run.user_adapters = options.user;
  return run;
}

std::optional<std::string> options_problem(const FleetsOptions& options, const std::vector<LockPair>& pairs) {
  for (std::size_t i = 0; i < options.locks.size(); ++i) {
    if (auto found = find_lock(options.locks[i], options.user); !found)
      return option_problem("--lock", found.error().message);
    if (std::find(options.locks.begin(), options.locks.begin() + static_cast<long>(i), options.locks[i]) !=
        options.locks.begin() + static_cast<long>(i))
      return option_problem("--lock", options.locks[i] + " is given twice");
  }
  if (pairs.empty()) return option_problem("--lock", "give at least two locks (or none: the default pairs)");
  if (options.clients_each < 1 || options.clients_each > kMaxClientsEach)
    return option_problem("--clients", "must be between 1 and " + std::to_string(kMaxClientsEach));
  return validate(pair_options(options, pairs.front()));
}

// What the catalog says of `lock`, and what its clients counted in `document`.
PairMember member_of(const std::string& lock, int clients, const json& document, const std::string& key,
                     const UserAdapters& user) {
  PairMember member;
  member.lock = lock;
  member.clients = clients;
  if (const auto described = find_lock(lock, user)) {
    member.key = locked_key(*described, key);
    member.multi_node = described->capabilities.multi_node;
    member.notifies_waiters = described->capabilities.notifies_waiters;
  }
  // Its unknown outcomes are indefinite, not failures: the judgment tells them apart.
  for (const auto& entry : document.value("fleet", json::array()))
    if (entry.value("lock", "") == lock) member.counts = read_lock_counts(entry);
  const json probe = document.value("adapters", json::object()).value(lock, json::object());
  member.noop_p50_us = optional_number_at(probe, "/noop_us/p50");
  member.noop_p99_us = optional_number_at(probe, "/noop_us/p99");
  // An adapter no catalog declares was asked before the pairs ran
  // (run_fleets: its key and words are in `user`); one whose init_ok could not
  // be read then is what it claimed at this run's probe, if it got that far.
  const LockDescription* own = user.find(lock);
  const json claimed = probe.value("capabilities", json::array());
  const auto claims = [&](const char* word) {
    return claimed.is_array() && std::find(claimed.begin(), claimed.end(), word) != claimed.end();
  };
  if (own != nullptr && !own->from_catalog && !own->declared_in_init_ok) {
    member.multi_node = claims("multi_node");
    member.notifies_waiters = claims("notifies_waiters");
  }
  return member;
}

void read_run(FleetPair& pair, const json& document) {
  pair.verdict = document.value("verdict", "error");
  pair.verdict_reasons = document.value("verdict_reasons", std::vector<std::string>{});
  pair.overlaps = static_cast<std::int64_t>(optional_number_at(document, "/safety/overlaps").value_or(0));
  pair.counter_expected = static_cast<std::int64_t>(optional_number_at(document, "/counter/expected").value_or(0));
  pair.counter_actual = static_cast<std::int64_t>(optional_number_at(document, "/counter/actual").value_or(0));
  const json endpoints = document.contains(json::json_pointer("/redis/endpoints"))
                             ? document.at(json::json_pointer("/redis/endpoints")) : json::array();
  pair.lock_servers = std::max<int>(1, static_cast<int>(endpoints.size()));
  // An adapter that failed its probe never met the other lock: nothing was measured.
  const json adapters = document.value("adapters", json::object());
  for (const auto& probe : adapters)
    if (probe.value("error", json()).is_string() && pair.error.empty()) pair.error = probe["error"].get<std::string>();
}

FleetPair measure_pair(const FleetsOptions& options, const LockPair& locks) {
  const RunOptions run = pair_options(options, locks);
  FleetPair pair;
  pair.spec = run.lock;
  const auto start = std::chrono::steady_clock::now();
  auto document = measure(run);
  pair.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const json record = document ? *document : json::object();
  if (!document) pair.error = one_line(document.error().message);
  else read_run(pair, record);
  for (const auto& lock : {locks.first, locks.second})
    pair.members.push_back(member_of(lock, options.clients_each, record, run.key, options.user));
  judge_pair(pair);
  return pair;
}

std::string workload_text(const FleetsOptions& options) {
  const RunOptions& run = options.base;
  std::ostringstream out;
  out << options.clients_each << " clients of each lock, "
      << (run.ops ? std::to_string(*run.ops) + " attempts" : fixed(run.duration_s, 1) + " s") << " a pair (hold "
      << run.hold_ms << " ms, ttl " << run.ttl_ms << " ms, wait " << run.wait_ms << " ms, retry " << run.retry_ms
      << " ms, " << mode_name(run.mode) << " clients, its own redis-servers; replay one with `locklab run --fleet "
      << "A:" << options.clients_each << ",B:" << options.clients_each << " "
      << (run.ops ? "--ops " + std::to_string(*run.ops) : "--duration " + fixed(run.duration_s, 1)) << "`)";
  return out.str();
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char date[16];
  std::strftime(date, sizeof date, "%Y-%m-%d", &utc);
  return date;
}

}  // namespace

std::vector<LockPair> default_fleet_pairs(const UserAdapters& user) {
  std::vector<std::string> generations_on_redis;
  for (const auto& generation : generations())
    if (generation.capabilities.uses_redis && generation.capabilities.exclusion == Exclusion::across_processes)
      generations_on_redis.push_back(generation.name);
  // A generation's variant row that speaks another wire protocol (reentrant-watchdog+redisson:
  // Redisson's) is a different peer for every adapter: paired too.
  for (const auto& variant : generation_variants()) generations_on_redis.push_back(variant.name);
  std::vector<std::string> peers;
  for (const auto& peer : catalog_peers()) peers.push_back(peer.name);
  for (const auto& own : user.locks) peers.push_back(own.name);
  std::vector<LockPair> pairs;
  for (const auto& peer : peers)
    for (const auto& generation : generations_on_redis) pairs.emplace_back(generation, peer);
  for (const auto& pair : pairs_among(peers)) pairs.push_back(pair);
  return pairs;
}

RunOptions default_fleets_workload() {
  RunOptions options;
  options.duration_s = 1.0;
  return options;
}

Result<FleetsResult> run_fleets(const FleetsOptions& given) {
  const auto pairs = given.locks.empty() ? default_fleet_pairs(given.user) : pairs_among(given.locks);
  if (auto problem = options_problem(given, pairs)) return Error{ErrorKind::usage, *problem};
  // An adapter of `--adapter` alone, asked what its init_ok declares (its key,
  // multi_node, notifies_waiters) before any pair is laid out or judged, as the matrix does.
  auto user = with_init_ok_declarations(given.user, "fleets");
  if (!user) return user.error();
  FleetsOptions options = given;
  options.user = std::move(user).value();
  FleetsResult result;
  auto made = result_dir(options.out, "results/runs");
  if (!made) return made.error();
  result.dir = std::move(made).value();
  result.command = options.command;
  result.key = options.base.key;
  result.workload = workload_text(options);
  result.date = today_utc();
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    result.pairs.push_back(measure_pair(options, pairs[i]));
    const FleetPair& pair = result.pairs.back();
    std::fprintf(stderr, "locklab fleets: [%zu/%zu] %s: %s (%s s)\n", i + 1, pairs.size(), pair.locks_text().c_str(),
                 sharing_name(pair.sharing), fixed(pair.wall_s, 1).c_str());
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (auto written = write_fleets_report(result); !written) return written.error();
  return result;
}

}  // namespace locklab::harness
