#include "workload/adapter_probe.h"

#include <chrono>
#include <cmath>
#include <vector>

#include "servers/server_stats.h"

namespace locklab::harness {
namespace {

std::set<std::string> true_words(const std::map<std::string, bool>& capabilities) {
  std::set<std::string> words;
  for (const auto& [word, value] : capabilities)
    if (value) words.insert(word);
  return words;
}

// A shipped adapter says of itself what its catalog entry says of it.
Status check_claims(const LockDescription& lock, const std::set<std::string>& claimed) {
  if (!lock.from_catalog || claimed == lock.claimed) return Done{};
  return Error{ErrorKind::protocol, "adapter " + lock.label + ": its init_ok claims capabilities " +
                                        words_text(claimed) + ", " + peers_dir() + "/catalog.json says " +
                                        words_text(lock.claimed)};
}

// A key init_ok names must be the one the catalog's pattern gives for the run's key.
Status check_key(const LockDescription& lock, const std::string& said, const std::string& run_key) {
  if (said.empty() || lock.key_pattern.empty() || said == locked_key(lock, run_key)) return Done{};
  return Error{ErrorKind::protocol, "adapter " + lock.label + ": its init_ok says it locks '" + said + "', " +
                                        peers_dir() + "/catalog.json says '" + lock.key_pattern + "' ('" +
                                        locked_key(lock, run_key) + "')"};
}

// The pattern of a key init_ok named: the run's key in it stands for "{key}".
std::string pattern_of(std::string key, const std::string& run_key) {
  constexpr std::string_view placeholder = "{key}";
  for (auto at = key.find(run_key); !run_key.empty() && at != std::string::npos;
       at = key.find(run_key, at + placeholder.size()))
    key.replace(at, run_key.size(), placeholder);
  return key;
}

// How many of `servers` hold `key` now, or an Error naming the first that did not answer.
Result<std::size_t> servers_holding(const std::vector<redis::ConnectionOptions>& servers, const std::string& key) {
  std::size_t holding = 0;
  for (const auto& server : servers) {
    auto exists = ask(server, {"EXISTS", key});
    if (!exists || exists->is_error())
      return Error{ErrorKind::io, "EXISTS " + key + " on " + server.endpoint.to_string() +
                                      " failed: " + (exists ? std::string(exists->text()) : exists.error().message)};
    holding += exists->integer() > 0 ? 1 : 0;
  }
  return holding;
}

// The key the harness will read for this lock (until=expired, the keys left,
// node-crash's holder nodes) must be the one the library holds: once the
// probe's acquire got the lock, it is on the lock's servers (a majority of
// them for a multi-node lock) until the probe releases it. A key that is not
// there would be read gone at once, and `until=expired` would end after one lease
// (at once outside a section), "the key expired". An acquire
// that does not get the lock (another host's probe has it) checks nothing.
// Whether that acquire got the lock is on record (`probe_acquired`): a lock that
// refuses every acquire under a fault is unavailable only if it could acquire
// before it (sweeps/cell_class_of_run.cpp), else it is broken.
Result<bool> check_key_held(AdapterLock& adapter, const LockDescription& lock, const LockConfig& own, const std::string& key) {
  // An adapter that names no key is not asked to acquire: a probe's acquire is a real one, with
  // the library's side effects (a test adapter kills the first client that acquires); unasked,
  // it has not shown it can acquire (probe_acquired false: a run that acquired nothing is error).
  if (key.empty() || adapter.try_acquire(own.ttl) != Acquire::acquired) return false;
  auto holding = servers_holding(own.servers, key);
  (void)adapter.release();
  if (!holding) return Error{ErrorKind::io, "adapter " + lock.label + ": " + holding.error().message};
  const std::size_t needed = own.servers.size() / 2 + 1;
  if (*holding >= needed) return true;
  return Error{ErrorKind::protocol, "adapter " + lock.label + ": holds the lock, but its key '" + key + "' is on " +
                                        std::to_string(*holding) + " of " + std::to_string(own.servers.size()) +
                                        " lock servers (" + (lock.from_catalog ? "its catalog entry's key" : "its init_ok's key") +
                                        " is not what the library locks)"};
}

// The adapter's command as the run document records it: a path inside the
// source tree relative to it, so a committed result names no machine's checkout.
nlohmann::json recorded_command(const std::vector<std::string>& argv) {
  const std::string root = std::string(LOCKLAB_SOURCE_DIR) + "/";
  nlohmann::json out = nlohmann::json::array();
  for (const auto& word : argv) out.push_back(word.rfind(root, 0) == 0 ? word.substr(root.size()) : word);
  return out;
}

nlohmann::json probe_json(const LockDescription& lock, const AdapterProbe& probe) {
  nlohmann::json claimed = nlohmann::json::array();
  for (const auto& word : probe.claimed) claimed.push_back(word);
  return {{"command", recorded_command(lock.adapter)},
          {"library", probe.identity.library},
          {"version", probe.identity.version},
          {"language", probe.identity.language},
          {"capabilities", claimed},
          {"noop_us", {{"p50", probe.noop_us.p50}, {"p90", probe.noop_us.p90}, {"p99", probe.noop_us.p99},
                       {"max", probe.noop_us.max}, {"count", probe.noop_us.count}}},
          {"start_ms", std::round(probe.start_ms * 10) / 10},
          {"probe_acquired", probe.acquired}};
}

// An adapter the catalog does not ship is described by its init_ok; its
// servers were laid out before anyone knew what it would claim.
std::string adopt_claims(LockDescription& lock, const AdapterProbe& probe, const Capabilities& laid_out) {
  if (lock.key_pattern.empty() && !probe.identity.key.empty()) lock.key_pattern = pattern_of(probe.identity.key, probe.run_key);
  if (lock.from_catalog) return "";
  lock = with_claims(std::move(lock), probe.claimed);
  if (lock.capabilities.multi_node && !laid_out.multi_node)
    return "adapter " + lock.label + ": its init_ok claims multi_node, but the run's servers were laid out "
           "for one node (an adapter no catalog declares runs on one; declare multi_node in a --catalog FILE entry, "
           "docs/adapters.md)";
  return "";
}

}  // namespace

Result<AdapterProbe> probe_adapter(const LockDescription& lock, const LockConfig& config, int client, int noops) {
  LockConfig own = config;
  if (!lock.capabilities.multi_node && own.servers.size() > 1) own.servers.resize(1);
  const auto spawned = std::chrono::steady_clock::now();
  auto adapter = AdapterLock::create(lock.adapter, own, client, AdapterTimeouts{}, lock.label);
  if (!adapter) return adapter.error();
  AdapterProbe probe;
  probe.start_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - spawned).count();
  probe.identity = (*adapter)->identity();
  probe.claimed = true_words(probe.identity.capabilities);
  if (auto checked = check_claims(lock, probe.claimed); !checked) return checked.error();
  if (auto checked = check_key(lock, probe.identity.key, config.key); !checked) return checked.error();
  probe.run_key = config.key;
  std::vector<std::int64_t> round_trips;
  round_trips.reserve(static_cast<std::size_t>(noops));
  for (int i = 0; i < noops; ++i) {
    auto took = (*adapter)->noop();
    if (!took) return took.error();
    round_trips.push_back(took->count());
  }
  probe.noop_us = quantiles(round_trips);
  const std::string key = !lock.key_pattern.empty() ? locked_key(lock, config.key) : probe.identity.key;
  auto held = check_key_held(**adapter, lock, own, key);
  if (!held) return held.error();
  probe.acquired = *held;
  return probe;
}

ProbedAdapter probe_run_adapter(LockDescription& lock, const LockConfig& config, int client,
                                const Capabilities& laid_out) {
  auto probe = probe_adapter(lock, config, client);
  ProbedAdapter probed;
  probed.failure = probe ? adopt_claims(lock, *probe, laid_out) : probe.error().message;
  probed.record = probe ? probe_json(lock, *probe) : nlohmann::json{{"command", recorded_command(lock.adapter)}};
  if (!probed.failure.empty()) probed.record["error"] = probed.failure;
  return probed;
}

}  // namespace locklab::harness
