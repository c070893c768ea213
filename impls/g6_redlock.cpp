// Generation 6: Redlock over N independent masters.
//
// Per node, sent to every node before any reply is read (redis::FanOut, one round trip):
//   acquire  SET <key> <token> NX PX <ttl>                          OK = for, nil = against
//   release  EVAL <kCompareAndDeleteLua> 1 <key> <token>            1 deleted, -1 gone, 0 not ours
//            (generation 4's script, impls/g4_lua_safe_delete.h)
//   extend   EVAL <kExtend> 1 <key> <token> <ttl>                   1 re-armed, 0 not ours
//
// Acquire (redis.io steps 1-5, with the validity check done properly):
//   token = fresh 128 random bits (per attempt); t0 = monotonic now; fan out SET NX PX;
//   [after-fan-out-before-count]; elapsed = now - t0;  drift = ttl * clock_drift_factor + 2 ms
//   validity = ttl - elapsed - drift
//   acquired  iff  votes_for >= floor(N/2)+1  and  validity > 0;  valid_until = t0 + ttl - drift
//   otherwise release on ALL nodes at once (also those that errored or timed out:
//   a lost reply may hide an applied SET), then retry after a random delay that doubles
//   with each consecutive failure, capped (retry_delay_bounds): split votes back off.
//
// The races, and the tests that show them (tests/redlock_test.cpp):
//   - a minority of nodes dead or slow: AcquiresWithTwoNodesKilled, TwoSlowNodesCostOneTimeoutNotTwo.
//   - a pause while the replies are in flight (Kleppmann's K3): the validity check rejects the
//     lock: ValidityCheckRejectsAnAcquisitionSlowerThanTheTtl.
//   - a delayed release of our own earlier hold: harmless, since every acquisition has its own
//     token: LateReleaseOfAnEarlierHoldLeavesTheNewHoldAlone.
//   - a request whose connection closed after the send may have been applied; if such nodes
//     could complete a quorum, acquire says unknown: ConnectionsClosedAfterTheSendMakeTheOutcomeUnknown.
//   - STILL BROKEN: a node restarted without persistence forgets its key and lets a second
//     client reach a quorum while the first is within its validity:
//     RestartWithoutPersistenceLetsASecondHolderIn. A holder paused past its validity
//     keeps working (common to every lease): tests/fenced_test.cpp, and the fix, fencing.
//
// EVAL, not EVALSHA: a node restarted without persistence has an empty script cache, and a
// NOSCRIPT mid-fan-out would leave that node unreleased. Redis caches the body by SHA anyway.
#include "g6_redlock.h"

#include <algorithm>
#include <thread>

#include "g4_lua_safe_delete.h"  // kCompareAndDeleteLua
#include "single_server.h"       // config_error()
#include "token.h"

namespace locklab {
namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

// KEYS[1] lock, ARGV[1] our token, ARGV[2] ttl in ms.
constexpr const char* kExtend = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
)lua";

constexpr milliseconds kDefaultRetryBase{100};  // see retry_delay_bounds

std::string ms_text(microseconds us) { return std::to_string(us.count() / 1000) + " ms"; }

RedlockLock::NodeVote vote_of(const std::string& node, const Result<redis::Reply>& reply) {
  using Vote = RedlockLock::Vote;
  // Sent but unanswered (timeout, closed, reset) may have been applied; any other failure was not.
  if (!reply) return {node, reply.error().outcome_unknown() ? Vote::timed_out : Vote::errored, reply.error().message};
  if (reply->is_status("OK")) return {node, Vote::voted_for, reply->describe()};
  if (reply->is_nil()) return {node, Vote::voted_against, reply->describe()};
  return {node, Vote::errored, "unexpected reply: " + reply->describe()};
}

}  // namespace

const std::vector<ScriptShape>& redlock_scripts() {
  static const std::vector<ScriptShape> all = {script_shape(ScriptRole::compare_and_delete, kCompareAndDeleteLua, 1, 1),
                                              script_shape(ScriptRole::renew, kExtend, 1, 2)};
  return all;
}

const char* to_string(RedlockLock::Vote vote) {
  static constexpr const char* kNames[] = {"for", "against", "errored", "timed_out"};  // enum order
  return kNames[static_cast<int>(vote)];
}

const char* to_string(RedlockLock::Extend outcome) {
  static constexpr const char* kNames[] = {"extended", "not_held", "limit_reached", "expired", "lost"};
  return kNames[static_cast<int>(outcome)];
}

RedlockLock::RedlockLock(const LockConfig& config)
    : config_(config),
      step_(config.step),
      node_timeout_(config.node_timeout.count() > 0 ? config.node_timeout : scaled_node_timeout(config.ttl)),
      nodes_(redis::within(config.servers, node_timeout_)),
      drift_(clock_drift(config.ttl, config.clock_drift_factor)),
      jitter_(std::random_device{}()) {}

LockResult RedlockLock::create(const LockConfig& config) {
  auto usage = [](const std::string& problem) { return config_error("redlock", problem); };
  if (auto problem = invalid_config(config, 1)) return usage(*problem);
  if (config.node_timeout.count() < 0) return usage("node timeout must be >= 0 ms (0 = scaled from ttl)");
  if (config.node_timeout >= config.ttl) return usage("node timeout must be shorter than the ttl");
  if (!(config.clock_drift_factor >= 0.0 && config.clock_drift_factor < 1.0))
    return usage("clock drift factor must be in [0, 1)");
  if (config.max_extensions < 0) return usage("max extensions must be >= 0");
  if (clock_drift(config.ttl, config.clock_drift_factor) >= config.ttl)
    return usage("ttl " + std::to_string(config.ttl.count()) +
                 " ms leaves no validity after the clock drift allowance");

  std::unique_ptr<RedlockLock> lock(new RedlockLock(config));
  // Connect now, so the first acquisition is not slowed by connects. A
  // minority may be down (that is what Redlock is for); fewer than a quorum
  // reachable is an error, like an unreachable server for one-node generations.
  const auto reachable = lock->nodes_.connect_all();
  if (reachable.connected < lock->quorum())
    return Error{ErrorKind::io, "redlock: only " + std::to_string(reachable.connected) + " of " +
                                    std::to_string(lock->nodes_.size()) + " nodes reachable (quorum " +
                                    std::to_string(lock->quorum()) + "): " + reachable.first_error};
  return LockResult(std::unique_ptr<DistributedLock>(std::move(lock)));
}

std::optional<RedlockLock::Clock::time_point> RedlockLock::valid_until() const {
  return held_ ? valid_until_ : std::nullopt;
}

RedlockLock::Round RedlockLock::timed_round(const redis::Args& command, std::string_view step_point) {
  Round round;
  round.start = Clock::now();
  round.replies = nodes_.run(command, node_timeout_);
  step_(step_point);
  round.counted = Clock::now();
  round.elapsed = duration_cast<microseconds>(round.counted - round.start);
  // The lease began when the requests left: the time they took is gone from it.
  round.validity = duration_cast<microseconds>(config_.ttl) - round.elapsed - drift_;
  return round;
}

RedlockLock::Attempt RedlockLock::attempt_once() {
  // Unique per lock request (distlock page): a delayed release of an earlier hold cannot match it.
  token_ = acquisition_token(config_.owner);
  const Round round = timed_round({"SET", config_.key, token_, "NX", "PX", std::to_string(config_.ttl.count())},
                                  "after-fan-out-before-count");
  Attempt attempt;
  for (std::size_t i = 0; i < round.replies.size(); ++i)
    attempt.votes.push_back(vote_of(nodes_.name(i), round.replies[i]));
  count(attempt);
  attempt.elapsed = round.elapsed;
  attempt.validity = round.validity;

  const bool quorum_for = attempt.votes_for >= quorum();
  attempt.acquired = quorum_for && attempt.validity.count() > 0;
  if (attempt.acquired) {
    valid_until_ = round.start + config_.ttl - drift_;
    attempt.verdict = "acquired, validity " + ms_text(attempt.validity);
  } else if (quorum_for) {
    // The check one public library skips: a quorum that came too late is no lock.
    attempt.verdict = "quorum came too late: elapsed " + ms_text(attempt.elapsed) + ", validity " +
                      ms_text(attempt.validity) + " <= 0";
  } else {
    attempt.verdict = "no quorum: " + std::to_string(attempt.votes_for) + " for, " +
                      std::to_string(attempt.votes_against) + " against, " +
                      std::to_string(round.replies.size() - attempt.votes_for - attempt.votes_against) +
                      " errored or timed out (quorum " + std::to_string(quorum()) + ")";
  }
  return attempt;
}

RedlockLock::Replies RedlockLock::release_everywhere(const std::string& token) {
  return nodes_.run({"EVAL", kCompareAndDeleteLua, "1", config_.key, token}, node_timeout_);
}

// After a failed attempt and its release: could our key still sit on a quorum?
// Only nodes that took (or may have taken) our SET and did not confirm the
// release count. Below a quorum we certainly do not hold the lock.
bool RedlockLock::may_still_hold_quorum(const Attempt& attempt, const Replies& released) const {
  std::size_t maybe = 0;
  for (std::size_t i = 0; i < released.size(); ++i) {
    const Vote vote = attempt.votes[i].vote;
    const bool took_it = vote == Vote::voted_for || vote == Vote::timed_out;
    const bool confirmed_gone = released[i] && released[i]->is_integer();
    if (took_it && !confirmed_gone) ++maybe;
  }
  return maybe >= quorum();
}

void RedlockLock::count(Attempt& attempt) {
  for (const auto& vote : attempt.votes) {
    switch (vote.vote) {
      case Vote::voted_for: ++attempt.votes_for, ++tally_.voted_for; break;
      case Vote::voted_against: ++attempt.votes_against, ++tally_.voted_against; break;
      case Vote::errored: ++tally_.errored; break;
      case Vote::timed_out: ++tally_.timed_out; break;
    }
  }
}

void RedlockLock::forget_hold() {
  held_ = false;
  valid_until_.reset();
  extensions_ = 0;
}

microseconds RedlockLock::retry_delay(int consecutive_failures) {
  const auto base = duration_cast<microseconds>(config_.retry_interval.value_or(kDefaultRetryBase));
  const auto [low, high] = retry_delay_bounds(base, consecutive_failures);
  return microseconds{std::uniform_int_distribution<long long>(low.count(), high.count())(jitter_)};
}

Acquire RedlockLock::try_acquire(milliseconds wait) {
  clear_error();
  if (held_ && valid_until_ && Clock::now() < *valid_until_)
    return fail(Acquire::error, "redlock: this lock object already holds the lock (not reentrant)");
  forget_hold();

  const auto deadline = Clock::now() + wait;
  for (;;) {
    last_attempt_ = attempt_once();
    if (last_attempt_.acquired) {
      held_ = true;
      failures_ = 0;
      return Acquire::acquired;
    }
    // Release everywhere at once before anything else, so our partial keys
    // cannot block our own next attempt (or anyone else) until their TTL.
    const Replies released = release_everywhere(token_);
    valid_until_.reset();
    ++failures_;  // kept across calls: a caller that retries at once still backs off
    if (may_still_hold_quorum(last_attempt_, released))
      return fail(Acquire::unknown, "redlock: " + last_attempt_.verdict +
                                        "; the release could not be confirmed on enough nodes, so a quorum "
                                        "may still hold our key until its ttl");
    const auto now = Clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(retry_delay(failures_), deadline - now));
  }

  // Too few nodes answered to ever decide: that is an error, not contention.
  if (last_attempt_.votes_for + last_attempt_.votes_against < quorum()) {
    std::string why = "redlock: " + last_attempt_.verdict;
    for (const auto& vote : last_attempt_.votes)
      if (vote.vote == Vote::errored || vote.vote == Vote::timed_out) why += "; " + vote.detail;
    return fail(Acquire::error, why);
  }
  return Acquire::timed_out;
}

// Order of the verdicts: a quorum deleted -> released; a quorum is someone
// else's -> not_owner; deleted + unanswered could still make a quorum -> we
// cannot tell (error); otherwise fewer than a quorum still had our key: the
// lock had lapsed -> already_expired. One fan-out, no retries: it returns
// within about the per-node timeout whatever the nodes do.
Release RedlockLock::release() {
  clear_error();
  const std::string token = token_;  // the hold this release ends, fixed before any delay
  step_("before-release");
  const auto counts = redis::count_integers(release_everywhere(token));
  if (token == token_) forget_hold();  // not a hold acquired while this release was delayed

  const std::size_t deleted = counts.of(1);
  if (deleted >= quorum()) return Release::released;
  if (counts.of(0) >= quorum()) return Release::not_owner;
  if (deleted + counts.unanswered >= quorum())
    return fail(Release::error, "redlock: deleted on " + std::to_string(deleted) + ", no answer from " +
                                    std::to_string(counts.unanswered) + " (quorum " + std::to_string(quorum()) +
                                    "): " + counts.first_unanswered);
  return Release::already_expired;
}

RedlockLock::Extend RedlockLock::extend() {
  clear_error();
  if (!held_ || !valid_until_) return Extend::not_held;
  if (extensions_ >= config_.max_extensions) return Extend::limit_reached;
  // Never re-create a lapsed lock: someone else may have held it in between.
  if (Clock::now() >= *valid_until_) return Extend::expired;

  const Round round = timed_round({"EVAL", kExtend, "1", config_.key, token_, std::to_string(config_.ttl.count())},
                                  "after-extend-fan-out-before-count");
  if (round.counted >= *valid_until_) return Extend::expired;
  if (redis::count_integers(round.replies).of(1) < quorum() || round.validity.count() <= 0) return Extend::lost;
  valid_until_ = round.start + config_.ttl - drift_;
  ++extensions_;
  return Extend::extended;
}

}  // namespace locklab
