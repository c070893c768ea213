// Generation 4 — SET NX PX with a token; release = one Lua compare-and-delete
// (seed 004 §7; redis.io SET page and distlock page; redis-py >= 3.0).
//
//   acquire: SET <key> <token> NX PX <ttl_ms>     as generation 3
//   release: EVALSHA <sha of the script below> 1 <key> <token>
//
//     local current = redis.call('get', KEYS[1])
//     if current == ARGV[1] then return redis.call('del', KEYS[1]) end
//     if current == false then return -1 end
//     return 0
//
// The seed's script is `if redis.call('get', KEYS[1]) == ARGV[1] then return
// redis.call('del', KEYS[1]) else return 0 end`; ours is the same check and
// delete, but answers -1 when there is no key, so release() can tell
// already_expired (-1) from not_owner (0). 1 = released. A script runs
// atomically (and with time frozen: the key cannot expire mid-script), so
// there is no window between the check and the DEL.
// Retry: kDefaultRetryInterval (10 ms); seed 004's loop sleeps 1 s (kSeed004RetryInterval).
//
// Fixed: generation 3's delete-after-expiry. The same interleaving leaves the
// new holder's lock intact (tests/generations_0_4_test.cpp
// Generations.LuaSafeDeleteLateReleaseLeavesAnotherClientsLockIntact).
// Race that remains: the lease. A holder slower than its TTL still overlaps
// the next holder — both believe they hold the lock at once
// (Generations.LuaSafeDeleteSlowHolderOverlapsTheNextHolder). Generation 5 renews the
// lease with a watchdog; only fencing (generation 7) makes it safe at the resource.
//
// Failover guard (LockConfig::wait_replicas > 0, impls/replica_wait.h): after
// the SET, WAIT for that many replicas; too few => release, Acquire::error.
// Shown by tests/replica_wait_test.cpp.
//
// Token: a fresh one per try_acquire (token.h, acquisition_token), as in
// generation 3, so the token names one acquisition, not one client.
//
// Step points: "before-release" (before the script is sent), "before-undo"
// (the WAIT guard found too few replicas and is about to undo the hold).
#pragma once

#include <vector>

#include "redis/script.h"

#include "script_shape.h"
#include "single_server.h"

namespace locklab {

// The release script above, shared with generation 7 (fenced = this + a token).
extern const char* const kCompareAndDeleteLua;
// Its reply as an outcome: 1 released, -1 already_expired, 0 not_owner.
Release compare_and_delete_outcome(long long code);
// Its scripts as the traffic shows them (script_shape.h): the compare-and-delete, 1 key, 1 arg.
const std::vector<ScriptShape>& lua_safe_delete_scripts();

class LuaSafeDeleteLock final : public SingleServerLock {
 public:
  static LockResult create(const LockConfig& config);

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  // released | not_owner | already_expired | error, decided by the server in one step.
  Release release() override;

 private:
  explicit LuaSafeDeleteLock(const LockConfig& config);
  Acquire confirm_replicated(const std::string& token);

  const LockConfig config_;
  std::string token_;  // this acquisition's (token.h: acquisition_token)
  const std::string ttl_ms_;
  redis::Script compare_and_delete_;
};

}  // namespace locklab
