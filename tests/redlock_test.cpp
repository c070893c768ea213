// Generation 6, Redlock, against five real redis-server masters: quorum,
// parallel fan-out, the validity check, release everywhere, bounded extension,
// per-node votes, and the fault it still does not survive (restart without
// persistence).
#include <algorithm>
#include <cstdio>
#include <future>
#include <map>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "g6_redlock.h"
#include "registry.h"

#include "fixtures/masters_fixture.h"
#include "scenario/step_gate.h"
#include "servers/redis_server.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Vote = RedlockLock::Vote;

const std::string kKey = "locklab:redlock";

// Five masters per test process (ctest runs every TEST in its own process).
class RedlockTest : public MastersTest<5> {
 protected:
  LockConfig config(milliseconds ttl = 10s, milliseconds node_timeout = 100ms) const {
    LockConfig lock_config;
    lock_config.key = kKey;
    lock_config.ttl = ttl;
    lock_config.node_timeout = node_timeout;
    lock_config.retry_interval = 5ms;
    for (const auto& server : servers_) lock_config.servers.push_back(server->connection_options());
    return lock_config;
  }

  static std::unique_ptr<RedlockLock> make(const LockConfig& lock_config) {
    auto made = RedlockLock::create(lock_config);
    EXPECT_TRUE(made) << made.error().message;
    if (!made) return nullptr;
    return std::unique_ptr<RedlockLock>(static_cast<RedlockLock*>(made.value().release()));
  }

  // A command on an admin connection of its own; reconnects once if the node
  // was paused or restarted since (the old connection is then dead).
  redis::Reply on_node(std::size_t node, const redis::Args& args) {
    auto& admin = admins_.at(node);
    auto reply = admin.command(args);
    if (!reply) {
      auto fresh = redis::Connection::connect(servers_[node]->connection_options());
      EXPECT_TRUE(fresh) << fresh.error().message;
      if (!fresh) return redis::Reply(nullptr);
      admin = std::move(fresh).value();
      reply = admin.command(args);
    }
    EXPECT_TRUE(reply) << reply.error().message;
    return reply ? std::move(reply).value() : redis::Reply(nullptr);
  }

  // Nodes whose key currently holds `token` (among the running ones).
  std::size_t nodes_holding(const std::string& token) {
    std::size_t holding = 0;
    for (std::size_t i = 0; i < servers_.size(); ++i)
      if (servers_[i]->running() && on_node(i, {"GET", kKey}).string() == token) ++holding;
    return holding;
  }
  std::size_t nodes_with_key() {
    std::size_t with_key = 0;
    for (std::size_t i = 0; i < servers_.size(); ++i)
      if (servers_[i]->running() && on_node(i, {"EXISTS", kKey}).integer() == 1) ++with_key;
    return with_key;
  }
  // Bounded wait until no running node has the key (its TTL ran out).
  bool wait_until_no_key(milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      if (nodes_with_key() == 0) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }

  // Bounded wait until `node` has read a `command` request and holds it unexecuted
  // (under CLIENT PAUSE WRITE such a client shows as cmd=<command>).
  bool wait_until_parked(std::size_t node, const std::string& command) {
    const auto deadline = Clock::now() + 5s;
    while (Clock::now() < deadline) {
      if (std::string(on_node(node, {"CLIENT", "LIST"}).text()).find("cmd=" + command + " ") != std::string::npos)
        return true;
      std::this_thread::sleep_for(1ms);
    }
    return false;
  }

  static harness::RedisServer& node(std::size_t i) { return *servers_.at(i); }
};

std::map<Vote, std::size_t> votes_of(const RedlockLock::Attempt& attempt) {
  std::map<Vote, std::size_t> counted;
  for (const auto& vote : attempt.votes) ++counted[vote.vote];
  return counted;
}

milliseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

// ---------------------------------------------------------------------------
// The rules (no server needed).

TEST(RedlockRules, QuorumDriftAndScaledNodeTimeout) {
  EXPECT_EQ(RedlockLock::quorum_for(1), 1u);
  EXPECT_EQ(RedlockLock::quorum_for(2), 2u);
  EXPECT_EQ(RedlockLock::quorum_for(3), 2u);
  EXPECT_EQ(RedlockLock::quorum_for(4), 3u);
  EXPECT_EQ(RedlockLock::quorum_for(5), 3u);
  EXPECT_EQ(RedlockLock::quorum_for(6), 4u);

  EXPECT_EQ(RedlockLock::clock_drift(10s, 0.01), 102ms);
  EXPECT_EQ(RedlockLock::clock_drift(1000ms, 0.01), 12ms);
  EXPECT_EQ(RedlockLock::clock_drift(150ms, 0.01), std::chrono::microseconds{3500});

  EXPECT_EQ(RedlockLock::scaled_node_timeout(10s), 50ms) << "the redis.io range for a 10 s ttl is 5-50 ms";
  EXPECT_EQ(RedlockLock::scaled_node_timeout(60s), 50ms);
  EXPECT_EQ(RedlockLock::scaled_node_timeout(2s), 10ms);
  EXPECT_EQ(RedlockLock::scaled_node_timeout(500ms), 5ms);
  EXPECT_EQ(RedlockLock::scaled_node_timeout(12ms), 3ms) << "never more than a quarter of the ttl";
}

TEST(RedlockRules, RetryDelayDoublesPerConsecutiveFailureUpToACap) {
  using std::chrono::microseconds;
  const microseconds base{10'000};
  using Bounds = std::pair<microseconds, microseconds>;
  EXPECT_EQ(RedlockLock::retry_delay_bounds(base, 1), Bounds(5ms, 15ms)) << "first retry: U[base/2, 3*base/2]";
  EXPECT_EQ(RedlockLock::retry_delay_bounds(base, 2), Bounds(10ms, 30ms));
  EXPECT_EQ(RedlockLock::retry_delay_bounds(base, 3), Bounds(20ms, 60ms));
  EXPECT_EQ(RedlockLock::retry_delay_bounds(base, 4), Bounds(20ms, 60ms)) << "capped at 2^2";
  EXPECT_EQ(RedlockLock::retry_delay_bounds(base, 1000), Bounds(20ms, 60ms));
  EXPECT_EQ(RedlockLock::retry_delay_bounds(base, 0), Bounds(5ms, 15ms)) << "no failure yet: no doubling";
}

TEST(RedlockRules, BadConfigIsAUsageError) {
  LockConfig lock_config;
  lock_config.servers = {redis::ConnectionOptions{}};
  lock_config.ttl = 2ms;  // drift alone is 2.02 ms
  auto made = RedlockLock::create(lock_config);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().kind, ErrorKind::usage);
  EXPECT_NE(made.error().message.find("no validity"), std::string::npos) << made.error().message;

  lock_config.ttl = 1s;
  lock_config.clock_drift_factor = 1.5;
  EXPECT_FALSE(RedlockLock::create(lock_config));
  lock_config.clock_drift_factor = 0.01;
  lock_config.servers.clear();
  EXPECT_FALSE(RedlockLock::create(lock_config));
}

// ---------------------------------------------------------------------------
// The happy path and its cost.

TEST_F(RedlockTest, AcquiresOnEveryNodeWithOneTokenAndReleasesEverywhere) {
  auto lock = make(config(10s));
  ASSERT_TRUE(lock);
  EXPECT_EQ(lock->quorum(), 3u);

  const auto before = redis::traffic();
  const auto start = Clock::now();
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired) << lock->last_error();
  const auto done = Clock::now();
  EXPECT_EQ(lock->token().size(), 32u) << "128 random bits as hex";
  EXPECT_EQ(redis::traffic().commands - before.commands, 5u) << "one SET NX PX per node, nothing else";
  EXPECT_EQ(redis::traffic().round_trips - before.round_trips, 1u) << "one fan-out: one round trip for all nodes";

  EXPECT_EQ(nodes_holding(lock->token()), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    const long long pttl = on_node(i, {"PTTL", kKey}).integer();
    EXPECT_GT(pttl, 9000);
    EXPECT_LE(pttl, 10000);
  }
  EXPECT_EQ(lock->last_attempt().votes_for, 5u);
  EXPECT_TRUE(lock->last_attempt().acquired);
  ASSERT_TRUE(lock->valid_until());
  // valid_until = t0 + ttl - drift, t0 = the monotonic time the fan-out started.
  const auto drift = RedlockLock::clock_drift(10s, 0.01);
  EXPECT_GE(*lock->valid_until(), start + 10s - drift);
  EXPECT_LE(*lock->valid_until(), done + 10s - drift);

  const auto before_release = redis::traffic();
  EXPECT_EQ(lock->release(), Release::released) << lock->last_error();
  EXPECT_EQ(redis::traffic().commands - before_release.commands, 5u) << "one compare-and-delete per node";
  EXPECT_EQ(redis::traffic().round_trips - before_release.round_trips, 1u) << "one fan-out: one round trip";
  EXPECT_EQ(nodes_with_key(), 0u);
  EXPECT_FALSE(lock->valid_until());
}

TEST_F(RedlockTest, SecondClientIsRefusedAndLeavesTheHoldersKeysAlone) {
  auto holder = make(config());
  auto other = make(config());
  ASSERT_TRUE(holder && other);
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(other->try_acquire(30ms), Acquire::timed_out);
  EXPECT_EQ(other->last_attempt().votes_against, 5u);
  EXPECT_GE(other->node_tally()->voted_against, 5u);
  EXPECT_EQ(other->node_tally()->voted_for, 0u);
  EXPECT_EQ(nodes_holding(holder->token()), 5u) << "the loser's release-everywhere is owner-checked";
  EXPECT_EQ(other->release(), Release::not_owner);
  EXPECT_EQ(nodes_holding(holder->token()), 5u);
}

// A waiter that keeps losing backs off: with retry 5 ms the sleeps are at least 2.5, 5, then
// 10 ms each, so in 400 ms at most 41 sleeps complete (7.5 + 39 * 10 = 397.5 ms) and the
// 42nd ends at the deadline: at most 43 attempts. A fixed 5 ms interval (the policy before
// backoff) allows up to 160 and made 76 here.
TEST_F(RedlockTest, ALosingWaiterBacksOffExponentially) {
  auto holder = make(config());
  auto other = make(config());
  ASSERT_TRUE(holder && other);
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(other->try_acquire(400ms), Acquire::timed_out);
  const auto attempts = other->node_tally()->voted_against / 5;  // every attempt: 5 against
  EXPECT_GE(attempts, 2u) << "it does retry";
  EXPECT_LE(attempts, 43u) << "the retry delay did not grow with consecutive failures";
  EXPECT_EQ(holder->release(), Release::released);
}

TEST_F(RedlockTest, RegisteredAsMultiNodeGeneration6) {
  const Generation* generation = find_generation("redlock");
  ASSERT_NE(generation, nullptr);
  EXPECT_EQ(generation->number, "6");
  EXPECT_TRUE(generation->capabilities.multi_node);
  auto lock = make_lock("redlock", config());
  ASSERT_TRUE(lock) << lock.error().message;
  ASSERT_EQ((*lock)->try_acquire(0ms), Acquire::acquired);
  ASSERT_TRUE((*lock)->node_tally());
  EXPECT_EQ((*lock)->node_tally()->voted_for, 5u);
  ASSERT_TRUE((*lock)->valid_until());
  EXPECT_EQ((*lock)->release(), Release::released);
}

// Server commands per acquire+release from INFO commandstats: per node one SET,
// one EVAL, and inside it one GET and one DEL.
TEST_F(RedlockTest, ServerCommandsPerAcquireAndRelease) {
  auto calls = [&](std::size_t i, std::string_view command) -> long long {
    const std::string info(on_node(i, {"INFO", "commandstats"}).text());
    const std::string field = "cmdstat_" + std::string(command) + ":calls=";
    const auto at = info.find(field);
    return at == std::string::npos ? 0 : std::stoll(info.substr(at + field.size()));
  };
  for (std::size_t i = 0; i < 5; ++i) on_node(i, {"CONFIG", "RESETSTAT"});
  auto lock = make(config());
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  ASSERT_EQ(lock->release(), Release::released);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(calls(i, "set"), 1);
    EXPECT_EQ(calls(i, "eval"), 1);
    EXPECT_EQ(calls(i, "get"), 1);
    EXPECT_EQ(calls(i, "del"), 1);
  }
}

// ---------------------------------------------------------------------------
// Node failures.

TEST_F(RedlockTest, AcquiresWithTwoNodesKilled) {
  auto lock = make(config());
  ASSERT_TRUE(lock);
  node(3).crash();
  node(4).crash();
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired) << lock->last_error();
  EXPECT_EQ(lock->last_attempt().votes_for, 3u);
  const auto tally = *lock->node_tally();
  EXPECT_EQ(tally.voted_for, 3u);
  EXPECT_EQ(tally.errored + tally.timed_out, 2u);
  // The fan-out sees the idle connections closed and reconnects before sending:
  // refused, so nothing was sent there (not a "maybe applied" closed-after-send).
  EXPECT_EQ(votes_of(lock->last_attempt())[Vote::errored], 2u);
  EXPECT_EQ(nodes_holding(lock->token()), 3u);
  EXPECT_EQ(lock->release(), Release::released) << lock->last_error();
  EXPECT_EQ(nodes_with_key(), 0u);

  // A lock object created while the two are down works too.
  auto late = make(config());
  ASSERT_TRUE(late);
  EXPECT_EQ(late->try_acquire(0ms), Acquire::acquired) << late->last_error();
  EXPECT_EQ(votes_of(late->last_attempt())[Vote::errored], 2u) << "refused connects: nothing was sent there";
}

TEST_F(RedlockTest, FailsFastWithThreeNodesKilledAndLeavesNoKeys) {
  auto lock = make(config());
  ASSERT_TRUE(lock);
  for (std::size_t i : {2u, 3u, 4u}) node(i).crash();

  auto start = Clock::now();
  EXPECT_EQ(lock->try_acquire(0ms), Acquire::error);
  EXPECT_LT(since(start), 1s);
  EXPECT_NE(lock->last_error().find("no quorum"), std::string::npos) << lock->last_error();
  EXPECT_EQ(lock->last_attempt().votes_for, 2u) << "the two live nodes said yes";
  EXPECT_EQ(nodes_with_key(), 0u) << "and were released at once, not left to their 10 s TTL";

  start = Clock::now();
  EXPECT_EQ(lock->try_acquire(300ms), Acquire::error);
  EXPECT_GE(since(start), 300ms) << "retried for the whole wait";
  EXPECT_LT(since(start), 1300ms) << "but not much longer";
  EXPECT_EQ(nodes_with_key(), 0u);
  EXPECT_FALSE(lock->valid_until());

  auto refused = RedlockLock::create(config());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("only 2 of 5"), std::string::npos) << refused.error().message;
}

// Replies are awaited in parallel: two paused nodes cost one per-node timeout,
// not two (a sequential client with a 2 s socket timeout would wait 4 s).
TEST_F(RedlockTest, TwoSlowNodesCostOneTimeoutNotTwo) {
  const milliseconds node_timeout = 200ms;
  auto lock = make(config(10s, node_timeout));
  ASSERT_TRUE(lock);
  node(3).pause();
  node(4).pause();

  const auto start = Clock::now();
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired) << lock->last_error();
  const auto took = since(start);
  EXPECT_LT(took, 2 * node_timeout) << "waited " << took.count() << " ms";
  EXPECT_EQ(votes_of(lock->last_attempt())[Vote::timed_out], 2u);
  EXPECT_EQ(lock->node_tally()->timed_out, 2u);
  EXPECT_GT(lock->last_attempt().validity, 9500ms) << "the wait is charged to the validity";

  const auto release_start = Clock::now();
  EXPECT_EQ(lock->release(), Release::released) << lock->last_error();
  EXPECT_LT(since(release_start), 2 * node_timeout);
}

// With a majority silent, the SETs queued in the paused servers may still be
// applied when they resume: whether we hold a quorum is genuinely unknown.
TEST_F(RedlockTest, ThreeSlowNodesMakeTheOutcomeUnknown) {
  auto lock = make(config(1s, 100ms));
  ASSERT_TRUE(lock);
  for (std::size_t i : {2u, 3u, 4u}) node(i).pause();
  EXPECT_EQ(lock->try_acquire(0ms), Acquire::unknown);
  EXPECT_NE(lock->last_error().find("may still hold"), std::string::npos) << lock->last_error();
  EXPECT_EQ(votes_of(lock->last_attempt())[Vote::timed_out], 3u);
  for (std::size_t i : {2u, 3u, 4u}) node(i).resume();

  const Release released = lock->release();
  EXPECT_TRUE(released == Release::released || released == Release::already_expired) << to_string(released);
  EXPECT_TRUE(wait_until_no_key(2s));
}

// A connection closed after the request was sent is the same "maybe applied"
// as a lost reply. Nodes 2-4 read our SET and hold it (CLIENT PAUSE WRITE),
// then close our connection without a reply (CLIENT KILL); their release is
// held too, so it cannot be confirmed. Those three could complete a quorum:
// the outcome is unknown, not an error. (Counted as "errored", they gave error.)
TEST_F(RedlockTest, ConnectionsClosedAfterTheSendMakeTheOutcomeUnknown) {
  std::unique_ptr<RedlockLock> lock = make(config(10s, 3000ms));  // room to see and close all three before the deadline
  ASSERT_TRUE(lock);
  std::future<Acquire> acquired;
  const std::vector<std::size_t> held = {2, 3, 4};
  for (std::size_t i : held) on_node(i, {"CLIENT", "PAUSE", "20000", "WRITE"});
  acquired = std::async(std::launch::async, [&lock] { return lock->try_acquire(0ms); });
  for (std::size_t i : held) {
    ASSERT_TRUE(wait_until_parked(i, "set")) << "node " << i;
    on_node(i, {"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  }
  const Acquire outcome = acquired.get();
  for (std::size_t i : held) on_node(i, {"CLIENT", "UNPAUSE"});

  EXPECT_EQ(outcome, Acquire::unknown) << lock->last_error();
  EXPECT_EQ(lock->last_attempt().votes_for, 2u);
  for (std::size_t i : held) {
    const auto& vote = lock->last_attempt().votes[i];
    EXPECT_EQ(vote.vote, Vote::timed_out) << "node " << i << ": " << vote.detail;
    EXPECT_NE(vote.detail.find("closed"), std::string::npos) << "the close path, not a timeout: " << vote.detail;
  }
  EXPECT_EQ(lock->node_tally()->timed_out, 3u);
  EXPECT_EQ(lock->node_tally()->errored, 0u);
  EXPECT_EQ(nodes_with_key(), 0u) << "released everywhere as after any failed attempt";
}

// ---------------------------------------------------------------------------
// Partial keys and the validity check.

// Another client holds three nodes. Our failed attempt releases its two
// partial keys at once, so it neither blocks others nor itself: when the other
// client's keys expire, our next attempt wins.
TEST_F(RedlockTest, FailedAttemptReleasesItsPartialKeys) {
  for (std::size_t i : {2u, 3u, 4u}) on_node(i, {"SET", kKey, "someone-else", "PX", "400"});
  auto lock = make(config());
  ASSERT_TRUE(lock);
  EXPECT_EQ(lock->try_acquire(0ms), Acquire::timed_out);
  EXPECT_EQ(lock->last_attempt().votes_for, 2u);
  EXPECT_EQ(lock->last_attempt().votes_against, 3u);
  EXPECT_EQ(nodes_holding(lock->token()), 0u) << "partial keys released, not left for 10 s";
  EXPECT_EQ(nodes_holding("someone-else"), 3u);

  ASSERT_EQ(lock->try_acquire(3s), Acquire::acquired) << lock->last_error();
  // The other keys expire one node at a time: a quorum may come before the last one goes.
  EXPECT_GE(lock->last_attempt().votes_for, 3u);
  EXPECT_EQ(nodes_holding(lock->token()), lock->last_attempt().votes_for);
}

// Kleppmann's K3: a pause after the SETs went out (replies in flight) longer
// than the TTL. Every node voted for, but the lock expired before we could
// use it: validity <= 0, so it is not handed back.
TEST_F(RedlockTest, ValidityCheckRejectsAnAcquisitionSlowerThanTheTtl) {
  const milliseconds ttl = 300ms;
  auto lock_config = config(ttl);
  std::size_t held_during_pause = 0;
  RedlockLock* paused = nullptr;
  lock_config.step = [&](std::string_view point) {
    if (point != "after-fan-out-before-count") return;
    held_during_pause = nodes_holding(paused->token());
    std::this_thread::sleep_for(ttl + 50ms);
  };
  auto lock = make(lock_config);
  ASSERT_TRUE(lock);
  paused = lock.get();

  EXPECT_EQ(lock->try_acquire(0ms), Acquire::timed_out);
  EXPECT_EQ(held_during_pause, 5u) << "every SET succeeded";
  EXPECT_EQ(lock->last_attempt().votes_for, 5u);
  EXPECT_FALSE(lock->last_attempt().acquired);
  EXPECT_LT(lock->last_attempt().validity.count(), 0);
  EXPECT_NE(lock->last_attempt().verdict.find("too late"), std::string::npos) << lock->last_attempt().verdict;
  EXPECT_FALSE(lock->valid_until());
  EXPECT_EQ(nodes_with_key(), 0u);
}

// The drift term matters: the same delay is accepted with a small drift
// allowance and refused with a large one, and the refused keys are deleted
// while their TTL still runs (release everywhere, not expiry).
TEST_F(RedlockTest, DriftAllowanceDecidesAndRefusedKeysAreDeleted) {
  const milliseconds ttl = 1000ms, delay = 600ms;
  auto slow_count = [&](std::string_view point) {
    if (point == "after-fan-out-before-count") std::this_thread::sleep_for(delay);
  };
  auto lock_config = config(ttl);
  lock_config.step = slow_count;
  lock_config.clock_drift_factor = 0.5;  // drift 502 ms: 1000 - 600 - 502 < 0
  auto strict = make(lock_config);
  ASSERT_TRUE(strict);
  EXPECT_EQ(strict->try_acquire(0ms), Acquire::timed_out);
  EXPECT_EQ(strict->last_attempt().votes_for, 5u);
  EXPECT_EQ(nodes_with_key(), 0u) << "deleted ~400 ms before the keys would have expired";

  lock_config.clock_drift_factor = 0.01;  // drift 12 ms: about 388 ms of validity left
  auto lenient = make(lock_config);
  ASSERT_TRUE(lenient);
  ASSERT_EQ(lenient->try_acquire(0ms), Acquire::acquired);
  EXPECT_GT(lenient->last_attempt().validity, 0ms);
  EXPECT_LT(lenient->last_attempt().validity, 400ms);
  EXPECT_EQ(lenient->release(), Release::released);
}

// ---------------------------------------------------------------------------
// Release and extend.

TEST_F(RedlockTest, ReleaseOfAnExpiredLockReturnsPromptly) {
  auto lock = make(config(200ms));
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  ASSERT_TRUE(wait_until_no_key(2s));

  auto start = Clock::now();
  EXPECT_EQ(lock->release(), Release::already_expired) << lock->last_error();
  EXPECT_LT(since(start), 500ms) << "one fan-out, no retry loop";

  // Expired and taken by someone else: not_owner, and their keys stay.
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  ASSERT_TRUE(wait_until_no_key(2s));
  auto other = make(config());
  ASSERT_TRUE(other);
  ASSERT_EQ(other->try_acquire(0ms), Acquire::acquired);
  start = Clock::now();
  EXPECT_EQ(lock->release(), Release::not_owner);
  EXPECT_LT(since(start), 500ms);
  EXPECT_EQ(nodes_holding(other->token()), 5u);
}

TEST_F(RedlockTest, EveryAcquisitionHasItsOwnToken) {
  auto lock = make(config());
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  const std::string first = lock->token();
  ASSERT_EQ(lock->release(), Release::released);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  EXPECT_NE(lock->token(), first);
  EXPECT_EQ(nodes_holding(lock->token()), 5u);
  EXPECT_EQ(lock->release(), Release::released);
}

// The same client's release of an earlier hold arrives late (parked at
// before-release with its command built): the hold expired meanwhile, and the
// client acquired again. The late compare-and-delete carries the old token, so
// it deletes nothing. With one token per lock object it deleted the new hold
// on every node.
TEST_F(RedlockTest, LateReleaseOfAnEarlierHoldLeavesTheNewHoldAlone) {
  // Destroyed in reverse: the gate opens, then the late release finishes, then the lock goes.
  std::unique_ptr<RedlockLock> lock;
  std::future<Release> late_release;
  StepGate gate("before-release");
  auto lock_config = config(1000ms);
  lock_config.step = gate.hook();
  lock = make(lock_config);
  ASSERT_TRUE(lock);

  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  const std::string first = lock->token();
  late_release = std::async(std::launch::async, [&lock] { return lock->release(); });
  ASSERT_TRUE(gate.wait_arrival());
  ASSERT_TRUE(wait_until_no_key(3s)) << "the first hold expires while its release is delayed";
  // The gate orders these calls on the one lock object: the release thread is parked.
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired) << lock->last_error();
  const std::string second = lock->token();
  ASSERT_NE(second, first);

  gate.open();
  EXPECT_EQ(late_release.get(), Release::not_owner) << "every node holds the new token, not the old one";
  EXPECT_EQ(nodes_holding(second), 5u) << "the late release deleted nothing";
  EXPECT_TRUE(lock->valid_until()) << "nor made the lock object forget its new hold";
  EXPECT_EQ(lock->release(), Release::released);
}

TEST_F(RedlockTest, ExtendRearmsTheTtlUpToTheLimit) {
  auto lock_config = config(1000ms);
  lock_config.max_extensions = 2;
  auto lock = make(lock_config);
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);

  for (int round = 1; round <= 2; ++round) {
    const auto old_validity = *lock->valid_until();
    std::this_thread::sleep_for(100ms);
    ASSERT_EQ(lock->extend(), RedlockLock::Extend::extended) << "round " << round;
    EXPECT_GT(*lock->valid_until(), old_validity + 50ms);
    for (std::size_t i = 0; i < 5; ++i) EXPECT_GT(on_node(i, {"PTTL", kKey}).integer(), 900);
  }
  const auto before = redis::traffic();
  EXPECT_EQ(lock->extend(), RedlockLock::Extend::limit_reached);
  EXPECT_EQ(redis::traffic().commands, before.commands) << "refused without asking the nodes";
  EXPECT_EQ(nodes_holding(lock->token()), 5u);

  ASSERT_EQ(lock->release(), Release::released);
  EXPECT_EQ(lock->extend(), RedlockLock::Extend::not_held);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(lock->extend(), RedlockLock::Extend::extended) << "the limit is per acquisition";
}

TEST_F(RedlockTest, ExtendRefusesAnExpiredLockAndDoesNotRecreateIt) {
  auto lock = make(config(150ms));
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  ASSERT_TRUE(wait_until_no_key(2s));
  EXPECT_EQ(lock->extend(), RedlockLock::Extend::expired);
  EXPECT_EQ(nodes_with_key(), 0u);
}

TEST_F(RedlockTest, ExtendWithoutAQuorumIsLost) {
  auto lock = make(config());
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  const auto validity = *lock->valid_until();
  for (std::size_t i : {0u, 1u, 2u}) on_node(i, {"DEL", kKey});
  EXPECT_EQ(lock->extend(), RedlockLock::Extend::lost);
  EXPECT_EQ(*lock->valid_until(), validity) << "the old validity still bounds the holder";
}

// ---------------------------------------------------------------------------
// What Redlock does not survive (fault matrix row 9): a node restarted
// without persistence forgets the holder's key, and a second client reaches a
// quorum while the first is still well inside its validity.
TEST_F(RedlockTest, RestartWithoutPersistenceLetsASecondHolderIn) {
  auto first = make(config(10s));
  auto second = make(config(10s));
  ASSERT_TRUE(first && second);
  node(3).crash();
  node(4).crash();
  ASSERT_EQ(first->try_acquire(0ms), Acquire::acquired);  // holds nodes 0, 1, 2
  ASSERT_TRUE(node(3).restart());
  ASSERT_TRUE(node(4).restart());
  EXPECT_EQ(second->try_acquire(0ms), Acquire::timed_out) << "safe while node 2 keeps the key";

  node(2).crash();
  ASSERT_TRUE(node(2).restart());  // comes back empty, at once (no delayed restart)
  // (500 ms: room for retries on a loaded machine; the dead connection is replaced before the send.)
  ASSERT_EQ(second->try_acquire(500ms), Acquire::acquired) << "nodes 2, 3, 4: " << second->last_attempt().verdict;
  ASSERT_TRUE(first->valid_until());
  EXPECT_GT(*first->valid_until(), Clock::now() + 5s) << "and the first holder is still valid: two holders";
  EXPECT_EQ(nodes_holding(first->token()), 2u);
  EXPECT_EQ(nodes_holding(second->token()), 3u);
}

}  // namespace
}  // namespace locklab::testing
