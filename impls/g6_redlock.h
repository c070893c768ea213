// Generation 6: Redlock (seed 004 §10; redis.io "Distributed Locks with Redis").
//
// N independent masters, the same random 128-bit token on every node (a fresh
// one for every attempt), quorum floor(N/2)+1, one parallel round trip per
// attempt (redis/fanout.h), validity measured on the monotonic clock. See
// g6_redlock.cpp for the exact commands, the races and the tests that show them.
//
// Step points (LockConfig::step):
//   "after-fan-out-before-count"         every reply is in (or timed out); the
//                                        votes are not counted yet. A pause here
//                                        is Kleppmann's K3 (a GC pause while the
//                                        replies are in flight): the validity
//                                        check must reject the lock (tests/redlock_test.cpp
//                                        ValidityCheckRejectsAnAcquisitionSlowerThanTheTtl).
//   "after-extend-fan-out-before-count"  the same window for extend().
//   "before-release"                     release() is about to fan out; its command,
//                                        with the token of the hold it ends, is
//                                        already built (a pause here is a delayed
//                                        release message: LateReleaseOfAnEarlierHold-
//                                        LeavesTheNewHoldAlone).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "redis/fanout.h"
#include "redis/reply.h"

#include "lock.h"
#include "script_shape.h"

namespace locklab {

// Its scripts as the traffic shows them (script_shape.h): generation 4's compare-and-delete
// (1 key, 1 arg) and the extend, a renew (1 key, 2 args), both sent whole by EVAL.
const std::vector<ScriptShape>& redlock_scripts();

class RedlockLock final : public DistributedLock {
 public:
  using Clock = std::chrono::steady_clock;

  // How one node answered one fan-out.
  enum class Vote {
    voted_for,      // SET NX said OK (extend: PEXPIRE applied on our key)
    voted_against,  // the key is someone else's (or, extend/release: not ours)
    errored,        // our request certainly did not take effect: it was never sent
                    // (no connection), or the node refused it with an error reply
    timed_out,      // sent and unanswered (deadline passed, connection closed or
                    // reset): Error::outcome_unknown(), it may have taken effect
  };

  struct NodeVote {
    std::string node;  // host:port
    Vote vote = Vote::errored;
    std::string detail;  // the reply or the error, for people reading a report
  };

  // The last acquire attempt, per node (DistributedLock::node_tally() sums them all).
  struct Attempt {
    std::vector<NodeVote> votes;
    std::size_t votes_for = 0;
    std::size_t votes_against = 0;
    std::chrono::microseconds elapsed{0};   // fan-out start -> votes counted (monotonic)
    std::chrono::microseconds validity{0};  // ttl - elapsed - drift; acquired needs > 0
    bool acquired = false;
    std::string verdict;  // one line: "acquired", "no quorum: 2 for, 3 against", ...
  };

  enum class Extend {
    extended,       // a quorum re-armed the TTL within the old validity; valid_until moved
    not_held,       // no acquired lock to extend
    limit_reached,  // LockConfig::max_extensions already used; nothing was sent
    expired,        // the validity ran out (before or during the attempt); nothing re-created
    lost,           // fewer than a quorum still had our key; the old validity still applies
  };

  static LockResult create(const LockConfig& config);

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  Release release() override;
  Extend extend();

  std::optional<Clock::time_point> valid_until() const override;
  std::optional<NodeTally> node_tally() const override { return tally_; }

  const Attempt& last_attempt() const { return last_attempt_; }
  std::size_t quorum() const { return quorum_for(nodes_.size()); }
  std::chrono::milliseconds node_timeout() const { return node_timeout_; }
  // The token of the last attempt (of the current hold, while acquired).
  const std::string& token() const { return token_; }

  // The rules, public so the docs and the tests can check them.
  static std::size_t quorum_for(std::size_t nodes) { return nodes / 2 + 1; }
  // ttl * factor + 2 ms (antirez/redlock-rb: 1 ms Redis expire precision + 1 ms minimum drift).
  static std::chrono::microseconds clock_drift(std::chrono::milliseconds ttl, double factor) {
    const double proportional_us = static_cast<double>(ttl.count()) * 1000.0 * factor;
    return std::chrono::microseconds{std::llround(proportional_us)} + std::chrono::milliseconds{2};
  }
  // LockConfig::node_timeout 0 => clamp(ttl/200, 5 ms, 50 ms), never above ttl/4. 0.5 % of
  // the TTL (half the default drift allowance) is the most a dead node may cost an attempt;
  // at least 5 ms so a busy host is not taken for dead; at most 50 ms: the redis.io page's
  // 5-50 ms range for a 10 s TTL.
  static std::chrono::milliseconds scaled_node_timeout(std::chrono::milliseconds ttl) {
    const auto scaled = std::clamp(ttl / 200, std::chrono::milliseconds{5}, std::chrono::milliseconds{50});
    return std::max(std::chrono::milliseconds{1}, std::min(scaled, ttl / 4));
  }
  // The delay after the n-th consecutive failed attempt (n >= 1, since the last acquisition) is drawn
  // from [base/2, 3*base/2] * 2^min(n-1, kMaxRetryDoublings). Under contention attempts that
  // collide split the votes and nobody reaches a quorum; randomized exponential backoff spreads
  // the retries out until one attempt at a time reaches the nodes again. Capped, so a waiter
  // never sleeps more than 6 base intervals past a release
  // (4x and 8x measured: more doubling bought no throughput and cost fairness, docs/performance.md).
  static constexpr int kMaxRetryDoublings = 2;
  static std::pair<std::chrono::microseconds, std::chrono::microseconds> retry_delay_bounds(
      std::chrono::microseconds base, int consecutive_failures) {
    const auto scale = 1LL << std::clamp(consecutive_failures - 1, 0, kMaxRetryDoublings);
    return {base / 2 * scale, base * 3 / 2 * scale};
  }

 private:
  explicit RedlockLock(const LockConfig& config);

  using Replies = redis::FanOut::Replies;

  // One fan-out timed on the monotonic clock, with the step point between the
  // replies and their counting.
  struct Round {
    Replies replies;
    Clock::time_point start;                // just before the send
    Clock::time_point counted;              // every reply in (or timed out), after the step point
    std::chrono::microseconds elapsed{0};   // counted - start
    std::chrono::microseconds validity{0};  // ttl - elapsed - drift
  };
  Round timed_round(const redis::Args& command, std::string_view step_point);
  Attempt attempt_once();
  Replies release_everywhere(const std::string& token);
  bool may_still_hold_quorum(const Attempt& attempt, const Replies& released) const;
  void count(Attempt& attempt);  // its votes_for/against, and the running tally
  void forget_hold();
  std::chrono::microseconds retry_delay(int consecutive_failures);

  LockConfig config_;
  StepPoints step_;
  std::string token_;  // drawn afresh by every attempt
  std::chrono::milliseconds node_timeout_;
  redis::FanOut nodes_;
  std::chrono::microseconds drift_;
  std::minstd_rand jitter_;

  bool held_ = false;
  std::optional<Clock::time_point> valid_until_;
  int extensions_ = 0;
  int failures_ = 0;  // consecutive failed attempts since the last acquisition
  Attempt last_attempt_;
  NodeTally tally_;
};

const char* to_string(RedlockLock::Vote vote);
const char* to_string(RedlockLock::Extend outcome);

}  // namespace locklab
