#include "registry.h"

#include <utility>

#include "g0_local_mutex.h"
#include "g0_no_lock.h"
#include "g1_setnx.h"
#include "g1b_setnx_expire.h"
#include "g2_getset_timestamp.h"
#include "g3_set_nx_px_token.h"
#include "g4_lua_safe_delete.h"
#include "g5_reentrant_watchdog.h"
#include "g6_redlock.h"
#include "g7_fenced.h"
#include "g8_fair_queue.h"

// One include and one entry per generation, in teaching order. The step-point
// names in the capabilities are the ones each generation's .cpp calls (listed
// in its header, "Step points:").

namespace locklab {

const std::vector<Generation>& generations() {
  static const std::vector<Generation> all = {
      // Generations 0-4 (docs/generations.md, "Generations 0–4").
      {"no-lock", "0a", "no lock: acquire always succeeds",
       "none: every client is inside at once (lost counter updates)",
       {.uses_redis = false, .exclusion = Exclusion::none}, NoLock::create},
      {"local-mutex", "0b", "a mutex in this process's memory, one per key",
       "excludes threads of one process, not other processes",
       {.uses_redis = false, .exclusion = Exclusion::within_process, .owner_checked_release = true,
        .notifies_waiters = true},
       LocalMutexLock::create},
      {"setnx", "1", "SETNX key owner, retry; release DEL key",
       "no TTL: a holder that crashes deadlocks everyone", {.release_window = "before-del"}, SetnxLock::create},
      {"setnx-expire", "1b", "SETNX key owner, then EXPIRE key secs; release DEL key",
       "crash between SETNX and EXPIRE: no TTL, deadlock; blind DEL",
       {.expires = true,
        .release_window = "before-del",
        .acquire_gap = "after-setnx-before-expire",
        .ttl_resolution_ms = 1000},  // EXPIRE takes whole seconds
       SetnxExpireLock::create},
      {"getset-timestamp", "2", "SETNX key now+ttl+1; if expired GETSET and compare; release DEL key",
       "trusts client clocks; loser overwrites expiry; no owner: late DEL frees another's lock",
       {.expires = true, .release_window = "before-del"}, GetsetTimestampLock::create},
      {"set-nx-px-token", "3", "SET key token NX PX ttl; release GET, compare, DEL",
       "GET then DEL: a lock that expired in between is deleted from its next holder",
       {.expires = true, .owner_checked_release = true, .release_window = "after-get-before-del"},
       SetNxPxTokenLock::create},
      {"lua-safe-delete", "4", "SET key token NX PX ttl; release Lua compare-and-delete",
       "a holder slower than its TTL overlaps the next holder",
       {.expires = true, .owner_checked_release = true, .honours_wait_replicas = true,
        .release_window = "before-release"},
       LuaSafeDeleteLock::create},
      // Generation 5 (docs/generations.md, "Generation 5").
      {"reentrant-watchdog", "5",
       "Redisson RLock: Lua on a hash {owner:thread -> count}, watchdog renews every ttl/3, pub/sub wake-up",
       "async replication: a master failover before the key reaches the replica gives a second holder",
       {.expires = true, .owner_checked_release = true, .reentrant = true, .notifies_waiters = true,
        .honours_wait_replicas = true, .auto_extends = true, .release_window = "before-unlock-script",
        .wait_point = "before-wait", .release_reply = ReleaseReply::holds_left},
       ReentrantWatchdogLock::create},
      // Generations 6-7 (docs/generations.md, "Generation 6" and "Generation 7").
      {"redlock", "6",
       "SET NX PX with one random token on N independent masters at once; quorum N/2+1; "
       "validity = ttl - elapsed - drift",
       "a holder paused past its validity, a node restarted without persistence, or a node's clock "
       "jumping forward lets a second holder in",
       {.expires = true, .owner_checked_release = true, .multi_node = true, .release_window = "before-release"},
       RedlockLock::create},
      {"fenced", "7",
       "SET NX PX + Lua compare-and-delete, and INCR of a per-lock counter in the same script: a "
       "fencing token that the resource checks",
       "the lease still lapses under a paused holder, but the resource refuses its stale token; the "
       "token counter lives on one node",
       {.expires = true, .owner_checked_release = true, .fencing = true, .release_window = "before-release"},
       FencedLock::create},
      // Generation 8 (docs/generations.md, "Generation 8").
      {"fair-queue", "8",
       "FIFO queue of waiters in Redis (LIST + ZSET of deadlines); release hands the lock to the head "
       "and wakes only it (per-waiter channel)",
       "the lease still lapses under a slow holder; a waiter that crashes just before its turn holds "
       "the queue up for one ttl",
       {.expires = true, .owner_checked_release = true, .notifies_waiters = true,
        .release_window = "before-release", .wait_point = "before-wait"},
       FairQueueLock::create},
  };
  return all;
}

namespace {

// `base` with one switch of its LockConfig set by `set`: named "BASE+WHAT",
// the base's number, race and capabilities (the switch changes none of them).
Generation variant(std::string_view base, std::string_view what, std::string summary, std::string reason,
                   void (*set)(LockConfig&)) {
  Generation row = *find_generation(base);
  row.name = std::string(base) + "+" + std::string(what);
  row.summary = std::move(summary);
  row.make = [make = row.make, set](const LockConfig& config) {
    LockConfig switched = config;
    set(switched);
    return make(switched);
  };
  row.variant_of = std::string(base);
  row.variant_reason = std::move(reason);
  return row;
}

}  // namespace

const std::vector<Generation>& generation_variants() {
  static const std::vector<Generation> all = {
      // Issue 27 item 6: generation 5 on Redisson's wire (g5_reentrant_watchdog.h, "broadcast").
      variant("reentrant-watchdog", "redisson",
              "generation 5 with LockConfig::redisson_compatible: owner field <UUID>:<thread id>, waiters on "
              "redisson_lock__channel:{key}, a release PUBLISHes \"0\" there and wakes every waiter",
              "Redisson's wire protocol, so that its clients share a key with Redisson's RLock (docs/peers.md, "
              "\"In one fleet\"); the base row's waiters queue and a release wakes one of them, on channels "
              "Redisson never publishes to",
              [](LockConfig& config) { config.redisson_compatible = true; }),
  };
  return all;
}

const Generation* find_generation(std::string_view name) {
  for (const auto& generation : generations())
    if (generation.name == name) return &generation;
  for (const auto& row : generation_variants())
    if (row.name == name) return &row;
  return nullptr;
}

const std::vector<std::string_view>& step_points(std::string_view name) {
  // Kept by hand next to the generations: each line is what that
  // generation's .cpp passes to step_() (and its renewal timer's step).
  static const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> all = {
      {"setnx", {"before-del"}},
      {"setnx-expire", {"after-setnx-before-expire", "before-del"}},
      {"getset-timestamp", {"after-get-before-getset", "before-del"}},
      {"set-nx-px-token", {"before-release", "after-get-before-del"}},
      {"lua-safe-delete", {"before-release", "before-undo"}},
      {"reentrant-watchdog",
       {"after-acquire-script", "after-failed-attempt", "before-undo", "before-wait", "before-unlock-script",
        "before-force-unlock-script", "before-renewal", "after-renewal-script"}},
      {"redlock", {"after-fan-out-before-count", "after-extend-fan-out-before-count", "before-release"}},
      {"fenced", {"before-release"}},
      {"fair-queue", {"after-queued", "before-wait", "after-wait", "before-leave", "before-release"}},
  };
  static const std::vector<std::string_view> none;
  if (const Generation* row = find_generation(name); row != nullptr && !row->variant_of.empty())
    name = row->variant_of;  // a variant row passes its base's points
  for (const auto& [generation, points] : all)
    if (generation == name) return points;
  return none;
}

const std::vector<ScriptShape>& scripts(std::string_view name) {
  // The generations that run scripts, each listing its own (its header says which).
  static const std::vector<std::pair<std::string_view, const std::vector<ScriptShape>& (*)()>> all = {
      {"lua-safe-delete", lua_safe_delete_scripts}, {"reentrant-watchdog", reentrant_watchdog_scripts},
      {"redlock", redlock_scripts},                 {"fenced", fenced_scripts},
      {"fair-queue", fair_queue_scripts},
  };
  static const std::vector<ScriptShape> none;
  if (const Generation* row = find_generation(name); row != nullptr && !row->variant_of.empty())
    name = row->variant_of;  // a variant row runs its base's scripts
  for (const auto& [generation, scripts_of] : all)
    if (generation == name) return scripts_of();
  return none;
}

const ScriptShape* find_script(std::string_view name, std::string_view sha_or_body) {
  for (const auto& script : scripts(name))
    if (script.sha1 == sha_or_body || script.source == sha_or_body) return &script;
  return nullptr;
}

LockResult make_lock(std::string_view name, const LockConfig& config) {
  const Generation* generation = find_generation(name);
  if (generation == nullptr)
    return Error{ErrorKind::usage, "unknown lock '" + std::string(name) + "' (see: locklab list)"};
  return generation->make(config);
}

}  // namespace locklab
