#include "registry.h"

#include "g5_reentrant_watchdog.h"

// One include and one entry per generation, in teaching order.

namespace locklab {

const std::vector<Generation>& generations() {
  static const std::vector<Generation> all = {
      {"reentrant-watchdog", "5",
       "Redisson RLock: Lua on a hash {owner:thread -> count}, watchdog renews every ttl/3, pub/sub wake-up",
       "async replication: a master failover before the key reaches the replica gives a second holder",
       true, false, &ReentrantWatchdogLock::make},
  };
  return all;
}

const Generation* find_generation(std::string_view name) {
  for (const auto& generation : generations())
    if (generation.name == name) return &generation;
  return nullptr;
}

LockResult make_lock(std::string_view name, const LockConfig& config) {
  const Generation* generation = find_generation(name);
  if (generation == nullptr)
    return redis::Error{redis::ErrorKind::usage, "unknown lock '" + std::string(name) + "' (see: locklab list)"};
  return generation->make(config);
}

}  // namespace locklab
