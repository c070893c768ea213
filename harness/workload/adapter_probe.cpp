#include "workload/adapter_probe.h"

#include <vector>

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

nlohmann::json probe_json(const LockDescription& lock, const AdapterProbe& probe) {
  nlohmann::json claimed = nlohmann::json::array();
  for (const auto& word : probe.claimed) claimed.push_back(word);
  return {{"command", lock.adapter},
          {"library", probe.identity.library},
          {"version", probe.identity.version},
          {"language", probe.identity.language},
          {"capabilities", claimed},
          {"noop_us", {{"p50", probe.noop_us.p50}, {"p90", probe.noop_us.p90}, {"p99", probe.noop_us.p99},
                       {"max", probe.noop_us.max}, {"count", probe.noop_us.count}}}};
}

// An adapter the catalog does not ship is described by its init_ok; its
// servers were laid out before anyone knew what it would claim.
std::string adopt_claims(LockDescription& lock, const AdapterProbe& probe, const Capabilities& laid_out) {
  if (lock.key_pattern.empty() && !probe.identity.key.empty()) lock.key_pattern = pattern_of(probe.identity.key, probe.run_key);
  if (lock.from_catalog) return "";
  lock = with_claims(std::move(lock), probe.claimed);
  if (lock.capabilities.multi_node && !laid_out.multi_node)
    return "adapter " + lock.label + ": its init_ok claims multi_node, but the run's servers were laid out "
           "for one node (an adapter that is not shipped runs on one; ship it in " + peers_dir() + "/catalog.json)";
  return "";
}

}  // namespace

Result<AdapterProbe> probe_adapter(const LockDescription& lock, const LockConfig& config, int client, int noops) {
  LockConfig own = config;
  if (!lock.capabilities.multi_node && own.servers.size() > 1) own.servers.resize(1);
  auto adapter = AdapterLock::create(lock.adapter, own, client, AdapterTimeouts{}, lock.label);
  if (!adapter) return adapter.error();
  AdapterProbe probe;
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
  return probe;
}

ProbedAdapter probe_run_adapter(LockDescription& lock, const LockConfig& config, int client,
                                const Capabilities& laid_out) {
  auto probe = probe_adapter(lock, config, client);
  ProbedAdapter probed;
  probed.failure = probe ? adopt_claims(lock, *probe, laid_out) : probe.error().message;
  probed.record = probe ? probe_json(lock, *probe) : nlohmann::json{{"command", lock.adapter}};
  if (!probed.failure.empty()) probed.record["error"] = probed.failure;
  return probed;
}

}  // namespace locklab::harness
