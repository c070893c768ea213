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

}  // namespace locklab::harness
