#include "registry.h"

#include "g6_redlock.h"
#include "g7_fenced.h"

// One include and one entry per generation, in teaching order.

namespace locklab {

const std::vector<Generation>& generations() {
  static const std::vector<Generation> all = {
      {"redlock", "6",
       "SET NX PX with one random token on N independent masters at once; quorum N/2+1; "
       "validity = ttl - elapsed - drift",
       "a holder paused past its validity, a node restarted without persistence, or a node's clock "
       "jumping forward lets a second holder in",
       true, true, RedlockLock::make},
      {"fenced", "7",
       "SET NX PX + Lua compare-and-delete, and INCR of a per-lock counter in the same script: a "
       "fencing token that the resource checks",
       "the lease still lapses under a paused holder, but the resource refuses its stale token; the "
       "token counter lives on one node",
       true, false, FencedLock::make},
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
