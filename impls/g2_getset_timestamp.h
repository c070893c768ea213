// Generation 2 — the expiry timestamp in the value, GETSET takeover (seed 003,
// its RedisLock class line by line; also the old redis.io SETNX page and
// redis-py <= 2.9).
//
//   acquire: expires = now_ms + ttl + 1        (the client's wall clock: LockConfig::clock)
//            SETNX <key> <expires>             1 = ours
//            GET <key>                         -> current
//            if current != nil and current < now_ms:          (looks expired)
//              GETSET <key> <expires>          -> old
//              old == current                  = ours (we were first to replace it)
//            otherwise sleep retry_interval and start over
//   release: DEL <key>                         unconditional
//
// Release: the article advises checking that our own timestamp has not passed
// before the DEL, then says of its code "这里没有做" (not done here). We
// reproduce the code: an unconditional DEL, only when this object acquired
// (the seed's `if (locked)`).
// Retry: kDefaultRetryInterval (10 ms); the seed sleeps 100 ms (kSeed003RetryInterval).
// A value that is not a number (someone else's key) makes try_acquire return
// error (the seed's Long.parseLong would throw).
//
// Races, each shown by tests/generations_0_4_test.cpp:
//  (a) two clients take over the same expired lock: GETSET lets exactly one win
//      (GetsetTimestamp.ExactlyOneOfTwoRacingClientsWins) — this part works;
//  (b) the loser's GETSET overwrote the winner's expiry with its own
//      (GetsetTimestamp.LoserOverwritesWinnersExpiry) — "negligible", says the seed;
//  (c) correctness rests on synchronized client clocks: a client whose clock is
//      ahead judges a live lock expired and steals it (GetsetTimestamp.SkewedClockStealsALiveLock);
//  (d) there is no owner identity: a holder that overran its expiry DELs the
//      next holder's lock (GetsetTimestamp.ExpiredHolderDeletesTheNewHoldersLock).
//  Also: a GETSET on a key deleted after our GET returns nil — we lost, but our
//  timestamp is now stored and nobody holds it until it passes (the seed's quirk).
// Generation 3 moves expiry to the server (PX) and identity into the value (token).
//
// Step points: "after-get-before-getset", "before-del".
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "single_server.h"

namespace locklab {

// The lock's value read back as the expiry it holds (ms on the writer's wall
// clock); nullopt when it is not a whole number (another generation's value).
std::optional<long long> parse_millis(std::string_view text);

class GetsetTimestampLock final : public SingleServerLock {
 public:
  static LockResult create(const LockConfig& config);

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  // not_owner unless this object acquired, else blind DEL: released when a key
  // was deleted (ours or not), already_expired when none was.
  Release release() override;

 private:
  explicit GetsetTimestampLock(const LockConfig& config);
  std::optional<Acquire> attempt();

  const std::shared_ptr<const WallClock> clock_;
  const std::chrono::milliseconds ttl_;
  bool held_ = false;
};

}  // namespace locklab
