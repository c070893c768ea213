// Generation 1b — SETNX, then EXPIRE as a second command (seed 003 §六.1 一些问题,
// seed 004 §5 "通过expire设置过期时间（缺乏原子性）").
//
//   acquire: SETNX <key> <owner>        1 = ours; 0 = busy: sleep, retry
//            EXPIRE <key> <ttl-seconds>  a separate round trip
//   release: DEL <key>                  blind
//
// EXPIRE, not PEXPIRE: seed 003's sketch is `expire key expireSec`, in seconds.
// LockConfig::ttl is rounded UP to whole seconds (100 ms -> 1 s, 1500 ms -> 2 s),
// so the lease is never shorter than asked for. The EXPIRE reply is not needed
// to hold the lock (SETNX already gave it to us): if EXPIRE fails, try_acquire
// still reports acquired — like the seed, which never checks it — and the key
// is left without a TTL, the same deadlock as a crash.
// Retry: kDefaultRetryInterval (10 ms); seed 004's loop sleeps 1 s (kSeed004RetryInterval).
//
// Race: a crash between SETNX and EXPIRE leaves the key with no TTL (-1): a
// deadlock, exactly generation 1's. Shown by tests/generations_0_4_test.cpp
// Generations.SetnxExpireCrashBetweenSetnxAndExpireDeadlocks (crash_at the step point below).
// Also the blind DEL: a holder slower than its TTL deletes the next holder's
// lock (Generations.SetnxExpireLateDelDeletesTheNextHoldersLock). Generation 2 avoids the
// two-command gap by storing the expiry in the value; generation 3 with SET NX PX.
//
// Step points: "after-setnx-before-expire", "before-del".
#pragma once

#include "single_server.h"

namespace locklab {

class SetnxExpireLock final : public SingleServerLock {
 public:
  static LockResult create(const LockConfig& config);

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  // As generation 1: not_owner unless this object acquired, else blind DEL.
  Release release() override;

 private:
  explicit SetnxExpireLock(const LockConfig& config);

  const std::string owner_;
  const std::string ttl_seconds_;
  bool held_ = false;
};

}  // namespace locklab
