// Generation 3 — SET NX PX with a random token; release = GET, compare, DEL
// (seed 004 §5–6: setIfAbsent(key, uuid, ttl) and "判断是否自己的锁").
//
//   acquire: SET <key> <token> NX PX <ttl_ms>     OK = ours; nil = busy: sleep, retry
//   release: GET <key>                            nil -> already_expired; other token -> not_owner
//            DEL <key>                            a second command: the check is already stale
//
// token = acquisition_token(LockConfig::owner) (token.h): 128 fresh bits from
// getrandom for EVERY try_acquire, prefixed "<owner>:" when an owner is set
// (the seed uses a UUID). release() compares against the token of the
// acquisition it ends, so a release delayed past this client's next
// acquisition cannot take that new hold (TokenPerAcquisition tests). One atomic command
// sets value and TTL: generation 1b's SETNX/EXPIRE gap is gone, and the
// server counts the lease, so client clocks no longer matter (generation 2).
// Retry: kDefaultRetryInterval (10 ms); seed 004's loop sleeps 1 s (kSeed004RetryInterval).
//
// Race (seed 004 §6 "缺乏原子性"): GET says "mine", the key expires, another
// client acquires, then our DEL removes *its* lock — a third client can now
// enter while the second is still inside. Shown by tests/generations_0_4_test.cpp
// Generations.SetNxPxTokenDeleteAfterExpiryRemovesAnotherClientsLock (pause at the step
// point below until PTTL is -2). Generation 4 makes the compare-and-delete one
// Lua script. Also: a holder slower than its TTL overlaps the next holder
// (every lease lock does; see generation 4's test).
//
// Step points: "before-release" (before the GET), "after-get-before-del".
#pragma once

#include "single_server.h"

namespace locklab {

class SetNxPxTokenLock final : public SingleServerLock {
 public:
  static LockResult create(const LockConfig& config);

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  // Asks the server every time (the token is the proof of ownership):
  // released | not_owner | already_expired | error.
  Release release() override;

 private:
  explicit SetNxPxTokenLock(const LockConfig& config);

  const std::string owner_;  // LockConfig::owner: the prefix of every token
  std::string token_;        // this acquisition's
  const std::string ttl_ms_;
};

}  // namespace locklab
