// Generation 7: a lease lock that hands out fencing tokens (beyond the seeds:
// Kleppmann 2016, Redisson's RFencedLock, Chubby's sequencers).
//
// The lock is generation 4's (SET NX PX with a random token, Lua
// compare-and-delete); the same acquire script also INCRs a per-lock counter
// that never expires and returns it as the fencing token. Tokens increase
// across all holders, so the protected resource can refuse a holder whose
// lease ran out behind its back (harness/resource/counter_resource.h, fenced mode).
// See g7_fenced.cpp for the exact script and the tests that show the race.
//
// Step points (LockConfig::step):
//   "before-release"   release() is about to run the compare-and-delete.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "redis/script.h"

#include "script_shape.h"
#include "single_server.h"

namespace locklab {

// Its scripts as the traffic shows them (script_shape.h): the fenced acquire (2 keys, 2 args)
// and generation 4's compare-and-delete (1 key, 1 arg).
const std::vector<ScriptShape>& fenced_scripts();

class FencedLock final : public SingleServerLock {
 public:
  using Clock = std::chrono::steady_clock;

  static LockResult create(const LockConfig& config);

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  Release release() override;

  // The token of our current hold, kept until release(): a holder whose lease
  // lapsed unnoticed still carries its old token, which is exactly what the
  // resource must refuse.
  std::optional<std::uint64_t> fencing_token() const override { return fence_; }
  // When the acquire request was sent + ttl: after that the lease may be gone.
  std::optional<Clock::time_point> valid_until() const override { return valid_until_; }

  const std::string& fence_key() const { return fence_key_; }
  // The token of the latest acquisition (a fresh one per try_acquire).
  const std::string& token() const { return token_; }

  // "{key}:fence" (same cluster slot as the lock key), or "key:fence" when the key has a hash tag already.
  static std::string fence_key_for(const std::string& key);

 private:
  explicit FencedLock(const LockConfig& config);

  const std::string owner_;  // LockConfig::owner: the prefix of every token
  std::string token_;
  const std::string ttl_ms_;
  const std::chrono::milliseconds ttl_;
  const std::string fence_key_;
  redis::Script acquire_;
  redis::Script compare_and_delete_;

  std::optional<std::uint64_t> fence_;
  std::optional<Clock::time_point> valid_until_;
};

}  // namespace locklab
