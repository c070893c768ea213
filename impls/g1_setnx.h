// Generation 1 — naive SETNX + DEL (seed 004 §4).
//
//   acquire: SETNX <key> <owner>        1 = ours; 0 = busy: sleep retry_interval, try again
//   release: DEL <key>                  blind: deletes whoever's lock is there
//
// The seed stores the constant "111"; we store the owner identity instead
// (LockConfig::owner, or a random 128-bit token) so a human can see who holds
// it. Nothing reads it back: release is still a blind DEL.
// Retry: kDefaultRetryInterval (10 ms); the seed sleeps 1 s (kSeed004RetryInterval).
//
// Race: the key has no TTL. A holder that crashes (or throws) between SETNX and
// DEL leaves the key forever: every later client waits out its wait, deadlock.
// Shown by tests/generations_0_4_test.cpp Generations.SetnxCrashedHolderDeadlocksEveryone
// (acquire, drop the object without releasing: TTL is -1, nobody gets in).
// Generation 1b adds an EXPIRE.
//
// Step points: "before-del".
#pragma once

#include "single_server.h"

namespace locklab {

class SetnxLock final : public SingleServerLock {
 public:
  static LockResult create(const LockConfig& config);

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  // not_owner (nothing sent) unless this object acquired; otherwise DEL:
  // released when a key was deleted (ours or not), already_expired when none was.
  Release release() override;

 private:
  explicit SetnxLock(const LockConfig& config);

  const std::string owner_;
  bool held_ = false;
};

}  // namespace locklab
