#include "sweeps/matrix_columns.h"

#include <algorithm>

#include "sweeps/matrix_expectations.h"

namespace locklab::harness {
namespace {

using C = CellClass;

// ---- How each column's cells run ----
// One plan per column: the cell's faults, and what its workload changes so
// that the fault meets a contender. Each gets the base workload (after a
// timed column's switch to a duration) and the lock.

void plan_holder_crash(CellPlan& plan, const LockDescription&, bool) {
  RunOptions& o = plan.options;
  // Half a lease: the gap a crash leaves (nearly one ttl) shows as a stall.
  o.stall_ms = o.ttl_ms / 2;
  plan.faults = {"holder-crash"};
}

// One waiter beside the holder for a quorum lock: two waiters whose attempts
// meet can split the free nodes so that neither reaches its quorum
// (sesamecare keeps its partial votes through its retries; a Redisson RedLock
// unlocks a failed round's votes before it tries again), and the cell's class
// would then be the waiters' interleaving, not the lock's: a lapse read "safe,
// exposed", or a stall read as liveness, by luck (issue 25, item 7).
void one_waiter_for_a_quorum(RunOptions& o, const LockDescription& generation) {
  if (generation.capabilities.multi_node) o.clients = 2;
}

void plan_holder_pause(CellPlan& plan, const LockDescription& generation, bool) {
  RunOptions& o = plan.options;
  o.hold_ms = 50;
  one_waiter_for_a_quorum(o, generation);
  // Bounded at 3 x ttl: what setnx (no expiry, nobody gets in) waits for.
  plan.faults = {"holder-pause:until=other-acquired:max=" + std::to_string(3 * o.ttl_ms)};
}

void plan_slow_holder(CellPlan& plan, const LockDescription& generation, bool) {
  one_waiter_for_a_quorum(plan.options, generation);
  plan.faults = {"slow-holder:ms=" + std::to_string(3 * plan.options.ttl_ms)};
}

void plan_release_race(CellPlan& plan, const LockDescription& generation, bool quick) {
  RunOptions& o = plan.options;
  // Two clients. The first to reach the release window stops there (the
  // whole process: a watchdog stops too, so the lease lapses) until the other
  // client has got in and is inside; then it goes on, and its late release
  // meets the new holder's key while that holder is still inside (hold ms).
  // A condition, not a fixed pause: a fixed one ended before an extended
  // lease could lapse, and the race never ran (the bite says whether it did).
  // Its next attempt may then get in beside the new holder.
  o.clients = 2;
  o.ops = quick ? 6 : 20;
  o.hold_ms = o.ttl_ms / 2;
  plan.faults = {"holder-pause:at=" + std::string(generation.capabilities.release_window) +
                 ":until=other-inside:max=" + std::to_string(3 * o.ttl_ms)};
}

void plan_expire_gap(CellPlan& plan, const LockDescription& generation, bool quick) {
  RunOptions& o = plan.options;
  // The survivors wait behind a key that never expires: a few attempts of
  // one lease each show it (a stall of half a lease is already one).
  o.stall_ms = o.ttl_ms / 2;
  o.wait_ms = o.ttl_ms;
  o.ops = quick ? 5 : 15;
  plan.faults = {"holder-crash:at=" + std::string(generation.capabilities.acquire_gap)};
}

void plan_clock_skew(CellPlan& plan, const LockDescription& generation, bool) {
  RunOptions& o = plan.options;
  o.hold_ms = 50;
  one_waiter_for_a_quorum(o, generation);
  plan.faults = {"clock-skew:client=1:offset=" + std::to_string(5 * o.ttl_ms)};
}

// The columns whose fault takes the key away silently (a failover, a restart)
// and resets the contenders' connections while the holder waits inside with
// a patience (half its lease; 2 s for a watchdog lock, plus its catalog
// entry's resend_ms: watchdog_patience below): a contender must notice and win
// in that time. Two things would hide
// the lost lock behind the contender's own delays:
// - a library's Redis client reconnects after a backoff of its own, growing
//   while the node is down (ioredis 6: 50, 100, 200, 400 ms... each plus up to
//   200 ms of jitter). node-redisson's waiters were back 300 ms after a restart
//   on a quiet machine; on a loaded one (6 cells on 2 cores) the restart itself
//   takes longer, the backoff grows meanwhile, and half of a doubled lease
//   (500 ms) once ran out first: "safe, exposed". The lease is quadrupled, so
//   the holder waits at least 1 s after the fault for a waiter to get back in;
// - a waiter asleep on the holder's PTTL (node-redisson's tryLock, generation
//   5's queue) or retrying one attempt with the votes it already won
//   (@sesamecare-oss/redlock) sees the key gone only when its wait ends: short
//   waits (30 ms, as in clock-jump) keep every waiter trying afresh.
void contenders_keep_trying(RunOptions& o) {
  o.ttl_ms *= 4;
  o.wait_ms = 30;
}

constexpr double kClusterFailoverSeconds = 8.0;

// The faults that park the holder (failover, node-restart, clock-jump) wait
// half a lease for a contender to get in, and the run lasts the quick 1.5 s.
// A lock whose watchdog keeps the parked holder's lease waits 2 s (or half
// its lease, if longer; in failover and node-restart plus its resend_ms,
// below), and its run lasts a second past that, so that its
// contenders keep trying meanwhile: on a loaded machine a JVM's Redisson
// waiter got in only after the 250 ms of a clock jump's half lease, an ioredis
// client's reconnect backoff after a restart outlasted the 1 s of a restart's,
// and python-redis-lock's contenders (a 4 s lease: 2 s of patience already)
// had stopped with the 1.5 s run before the patience ran out. Each read safe
// or liveness for a contender that was late, not kept out. A lock without a
// watchdog keeps the half lease: a longer wait would let its own expiry, not
// the fault, admit the contender (the fault refuses a patience past a lapsing
// lease).
constexpr int kWatchdogPatienceMs = 2000;

// The fault's ":patience=MS" for `generation` ("" for half a lease), lengthening the run to match.
// `resets`: whether the fault resets the contenders' connections (failover, node-restart); then
// the patience also covers the time a command the reset caught takes to come back to its caller at
// the library's defaults (its catalog entry's "resend_ms"). Redisson's waiter whose acquire the restart caught waits out its 3 s
// timeout and a retry delay; with 2 s of patience alone, whether that retry came back while the
// holder was still inside (a second holder) or after it was let go (a waiter blocked past its
// bound) was the retry's timing: two classes in one cell (issue 25, item 7).
enum class Resets { connections, nothing };

std::string watchdog_patience(RunOptions& o, const LockDescription& generation, Resets resets) {
  if (!generation.capabilities.auto_extends) return "";
  const int resend = resets == Resets::connections ? generation.resend_ms : 0;
  const int patience = std::max(kWatchdogPatienceMs, o.ttl_ms / 2) + resend;
  o.duration_s = std::max(o.duration_s, patience / 1000.0 + 1.0);
  return ":patience=" + std::to_string(patience);
}

// ":catch=PATTERN" where the row's catalog entry names `column` in its catch_waiters ("" else): a
// row whose class hung on whether a waiter's request was on its way as the server went has every
// waiter's caught, so the fault decides it (nemesis/caught_waiters.h; issue 25, item 7).
std::string catch_suffix(const LockDescription& generation, const std::string& column) {
  const auto pattern = generation.catch_waiters.find(column);
  return pattern == generation.catch_waiters.end() ? "" : ":catch=" + pattern->second;
}

// The row's park_holder for `column`, if it has one: returns the fault's ":warm-up=N:park=read"
// ("" else), lengthens the run and, with after_read, plans two clients (below):
// a row whose state counts its acquisitions (Redisson's fenced lock: its token) has the holder
// parked after N of them, so that its count is past the few draws the fault's resets spend, and
// after its accepted read, let go at a contender's; the run is N sections longer (issue 25, item 7).
// A holder parked after its read meets one newcomer: two that race through the refused tokens let
// their 30 ms waits run out with an acquire on its way, and a lock that gives such a late win back
// (Redisson: RedissonFencedLock.java, `if (!result.complete(token)) unlockAsync`) spends a draw,
// which could be the holder's own token.
std::string apply_park_holder(RunOptions& o, const LockDescription& generation, const std::string& column) {
  const auto plan = generation.park_holder.find(column);
  if (plan == generation.park_holder.end()) return "";
  o.duration_s += plan->second.warm_up * o.hold_ms / 1000.0;
  if (plan->second.after_read) o.clients = 2;
  return (plan->second.warm_up > 0 ? ":warm-up=" + std::to_string(plan->second.warm_up) : std::string()) +
         (plan->second.after_read ? ":park=read" : "");
}

void plan_failover(CellPlan& plan, const LockDescription& generation, bool) {
  contenders_keep_trying(plan.options);
  plan.options.hold_ms = 100;
  // A row whose catalog says "failover_topology": "cluster" (Redisson's getLock:
  // seed 000 runs it on a Redis Cluster) fails over the key's master of a
  // cluster with replicas, its client configured for the cluster; every other
  // column of the row stays on the single server.
  plan.options.cluster = generation.failover_topology == "cluster";
  // Long enough to see whether the lock is usable after the failover (issue
  // 27: Redisson #4706, #4822): a library that WAITs for its replica spends a
  // second per refused acquire before the failover comes.
  if (plan.options.cluster) plan.options.duration_s = std::max(plan.options.duration_s, kClusterFailoverSeconds);
  plan.faults = {"failover:after=acquire" + watchdog_patience(plan.options, generation, Resets::connections) +
                 catch_suffix(generation, "failover")};
  plan.faults.front() += apply_park_holder(plan.options, generation, "failover");  // after the patience's duration
}

// A row whose catalog catches the waiters of node-minority (@sesamecare-oss/redlock: an attempt
// that neither wins nor loses a quorum of the live nodes waits for a dead node) has its first
// round split between two contenders, so that neither can reach a quorum: whether two attempts
// met on the live nodes within a millisecond was the interleaving its class hung on
// (nemesis/split_votes.h; issue 25, item 7).
void plan_node_minority(CellPlan& plan, const LockDescription& generation, bool) {
  const auto split = generation.catch_waiters.find("node-minority");
  if (split == generation.catch_waiters.end()) {
    plan.faults = {"node-crash:nodes=2:when=start"};
    return;
  }
  plan.options.clients = 2;
  plan.faults = {"node-crash:nodes=2:when=start:split=" + split->second};
}

void plan_node_restart(CellPlan& plan, const LockDescription& generation, bool) {
  RunOptions& o = plan.options;
  contenders_keep_trying(o);
  o.hold_ms = 100;
  const int nodes = generation.capabilities.multi_node ? o.nodes / 2 + 1 : 1;
  plan.faults = {"node-crash:nodes=" + std::to_string(nodes) + ":restart=now:when=holder" +
                 watchdog_patience(o, generation, Resets::connections) + catch_suffix(generation, "node-restart")};
  plan.faults.front() += apply_park_holder(o, generation, "node-restart");  // after the patience's duration
}

void plan_clock_jump(CellPlan& plan, const LockDescription& generation, bool) {
  RunOptions& o = plan.options;
  o.hold_ms = 100;
  // The jump expires the key under its holder. A waiter asleep on the PTTL
  // it read before the jump (reentrant-watchdog) would miss the lapse and
  // the cell would read safe by luck: short waits keep the waiter polling,
  // so where the algorithm allows a second holder one is there at once.
  o.wait_ms = 30;
  // One waiter, for every lock: two waiters whose 30 ms attempts overlap can
  // keep each other out where the lock would admit either (a fair queue's
  // waiter re-queues at the tail with each attempt and sleeps while another
  // is the head; two RedLock contenders split the free nodes, or spend their
  // wait on the held ones), and the cell would read safe by luck (issue 25,
  // item 7: Redisson's fair and RedLock rows did).
  o.clients = 2;
  // Redlock: the holder is given a bare majority (nodes 0-2) and the jump
  // hits one of them -- Kleppmann's K2, the case the algorithm does not
  // survive. On all five nodes it would keep a majority, but under
  // contention whether it won three or five was luck.
  const std::string majority = generation.capabilities.multi_node ? ":holder-nodes=3" : "";
  plan.faults = {"clock-jump:node=0:offset=" + std::to_string(10 * o.ttl_ms) + ":when=holder" + majority +
                 watchdog_patience(o, generation, Resets::nothing)};
}

void plan_net_cut(CellPlan& plan, const LockDescription&, bool quick) {
  RunOptions& o = plan.options;
  o.clients = 2;
  o.ops = quick ? 4 : 12;
  o.hold_ms = 2 * o.ttl_ms;  // working past the lease: only renewals could keep it
  plan.faults = {"net:mode=cut:target=holder:at=held"};
}

void plan_unavailable_release(CellPlan& plan, const LockDescription&, bool) {
  plan.options.stall_ms = plan.options.ttl_ms / 2;
  // The holder stays cut off until another client got in: the others meet
  // the key its refused release left, not its owner re-entering it first.
  plan.faults = {"unavailable:at=release:mode=refuse:until=other-acquired"};
}

// ---- Which locks a column cannot apply to ----

// A lock of the user's own (not a generation, not shipped): what a column parks
// at must be declared by its catalog entry or its init_ok.
bool users_own(const LockDescription& lock) { return lock.is_adapter() && !lock.shipped; }

// A user's lock that declares no `field`: n/a, naming the field and where it was not declared.
std::string undeclared(const LockDescription& lock, const std::string& field) {
  return lock.name + ": " + (lock.from_catalog ? "its catalog entry" : "its init_ok") + " declares no " + field +
         " (docs/adapters.md)";
}

std::string release_race_not_applicable(const LockDescription& lock) {
  const Capabilities& can = lock.capabilities;
  if (users_own(lock) && can.expires && can.release_window.empty())
    return undeclared(lock, "release_window (resp:PATTERN, the request its release sends): nowhere to park its release");
  if (!can.expires) return "no expiry: the key cannot lapse in the release window";
  if (can.release_window.empty()) return "no step point in its release window";
  return "";
}

std::string expire_gap_not_applicable(const LockDescription& lock) {
  if (!lock.capabilities.acquire_gap.empty()) return "";
  if (users_own(lock)) return undeclared(lock, "acquire_gap (resp:PATTERN): no step between taking the key and its expiry");
  return "no step between taking the key and its expiry";
}

std::string clock_skew_not_applicable(const LockDescription& lock) {
  return lock.clock_shim_unreachable;  // the catalog says why the skew cannot reach it
}

std::string failover_not_applicable(const LockDescription& lock) {
  return lock.capabilities.multi_node ? "independent masters, no replicas" : "";
}

std::string node_minority_not_applicable(const LockDescription& lock) {
  return lock.capabilities.multi_node ? "" : "a single node: no minority to lose";
}

// Every single-node lock, generation or library, is n/a under node-minority, for one reason.
std::optional<GenerationCell> node_minority_rule(const LockDescription& lock) {
  if (lock.capabilities.multi_node) return std::nullopt;
  return GenerationCell{"", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"};
}

// The note of the columns that give a quorum lock one waiter (one_waiter_for_a_quorum).
constexpr const char* kOneWaiterForAQuorum =
    "A quorum lock (multi-node) runs with one waiter instead of two: two waiters\n"
    "that split the free nodes can both miss their quorum (a pause's lapse would\n"
    "then read `safe, exposed`, a slow or skewed holder's contenders a stall, by\n"
    "luck, not by the lock: `one_waiter_for_a_quorum()` in\n"
    "`harness/sweeps/matrix_columns.cpp`).";

// ---- The classes written down for the generations ----
// Keep the reasons true to the code: docs/faults.md's list is rendered from
// them (columns_doc()). The generation variants' cells (impls/registry.h,
// generation_variants(); docs/generations.md lists the same cells) were
// written from the code before the first run: what the variant changes is how
// waiters wake, and no column's class hangs on that (each reason says why).

constexpr GenerationCell kHolderCrashCells[] = {
    {"setnx", C::deadlock, "no TTL: the dead holder's key stays forever"},
    {"setnx-expire", C::liveness, "EXPIRE was set: the key frees itself after one ttl"},
    {"getset-timestamp", C::liveness, "the next contender finds the timestamp past and GETSETs it"},
    {"set-nx-px-token", C::liveness, "server TTL: unavailable for the rest of the lease"},
    {"lua-safe-delete", C::liveness, "server TTL: unavailable for the rest of the lease"},
    {"reentrant-watchdog", C::liveness, "the watchdog dies with the process: free after one lease"},
    {"redlock", C::liveness, "the keys expire on every node after one ttl"},
    {"fenced", C::liveness, "server TTL: unavailable for the rest of the lease"},
    {"fair-queue", C::liveness, "the lease lapses, then the head of the queue gets the lock"},
    {"reentrant-watchdog+redisson", C::liveness, "the watchdog dies with the process: free after one lease; nothing is published, so waiters of either mode wake on the PTTL"},
};

constexpr GenerationCell kHolderPauseCells[] = {
    {"setnx", C::safe, "no TTL: the stopped holder keeps the lock; the others only time out"},
    {"setnx-expire", C::me_violation, "the key expires under the stopped holder; it resumes inside next to the new one"},
    {"getset-timestamp", C::me_violation, "the timestamp passes; a contender GETSETs it while the holder is stopped inside"},
    {"set-nx-px-token", C::me_violation, "the lease lapses under the stopped holder (Kleppmann's pause)"},
    {"lua-safe-delete", C::me_violation, "the lease lapses under the stopped holder; only fencing helps"},
    {"reentrant-watchdog", C::me_violation, "SIGSTOP freezes the watchdog too: the lease lapses"},
    {"redlock", C::me_violation, "validity is checked once, at acquire: a pause later is unseen"},
    {"fenced", C::safe, "the lease lapses, but the resource refuses the stopped holder's stale token"},
    {"fair-queue", C::me_violation, "the lease lapses; the queue hands the lock on while the holder is stopped"},
    {"reentrant-watchdog+redisson", C::me_violation, "SIGSTOP freezes the watchdog too: the lease lapses and a waiter woken by its PTTL takes the hash"},
};

constexpr GenerationCell kSlowHolderCells[] = {
    {"setnx", C::safe, "no TTL: a slow holder keeps the lock (and everyone waits)"},
    {"setnx-expire", C::me_violation, "the key expires while the holder still works"},
    {"getset-timestamp", C::me_violation, "the timestamp passes while the holder still works"},
    {"set-nx-px-token", C::me_violation, "the lease lapses while the holder still works"},
    {"lua-safe-delete", C::me_violation, "the lease lapses while the holder still works"},
    {"reentrant-watchdog", C::safe, "the live watchdog renews the lease every ttl/3"},
    {"redlock", C::me_violation, "the validity runs out; the workload does not extend it"},
    {"fenced", C::safe, "the lease lapses, but the slow holder's stale token is refused"},
    {"fair-queue", C::me_violation, "the lease lapses while the holder still works"},
    {"reentrant-watchdog+redisson", C::safe, "the live watchdog renews the lease every ttl/3; the broadcast wakes waiters only on a release"},
};

constexpr GenerationCell kReleaseRaceCells[] = {
    {"setnx", C::not_applicable, "no TTL: the key cannot expire in the release window"},
    {"setnx-expire", C::me_violation, "blind DEL deletes the new holder's key; the next acquire overlaps it"},
    {"getset-timestamp", C::me_violation, "blind DEL deletes the new holder's key; the next acquire overlaps it"},
    {"set-nx-px-token", C::me_violation, "GET matched, the key expired, DEL deletes the new holder's key"},
    {"lua-safe-delete", C::safe, "compare-and-delete is one script: the stale release deletes nothing"},
    {"reentrant-watchdog", C::safe, "the unlock script checks the owner field atomically"},
    {"redlock", C::safe, "compare-and-delete on every node"},
    {"fenced", C::safe, "compare-and-delete is one script"},
    {"fair-queue", C::safe, "the release script checks the holder's id atomically"},
    {"reentrant-watchdog+redisson", C::safe, "the unlock script checks the owner field atomically; waking every waiter lets none of them past the hash"},
};

constexpr GenerationCell kExpireGapCells[] = {
    {"setnx", C::not_applicable, "no EXPIRE at all (its crash is column holder-crash)"},
    {"setnx-expire", C::deadlock, "the key was set, the EXPIRE never came: no TTL, nobody gets in"},
    {"getset-timestamp", C::not_applicable, "one SETNX carries the expiry: no gap"},
    {"set-nx-px-token", C::not_applicable, "SET NX PX is one command: no gap"},
    {"lua-safe-delete", C::not_applicable, "SET NX PX is one command: no gap"},
    {"reentrant-watchdog", C::not_applicable, "HINCRBY and PEXPIRE run in one script: no gap"},
    {"redlock", C::not_applicable, "SET NX PX on each node: no gap"},
    {"fenced", C::not_applicable, "SET NX PX is one command: no gap"},
    {"fair-queue", C::not_applicable, "the acquire script sets the key with PX: no gap"},
    {"reentrant-watchdog+redisson", C::not_applicable, "HINCRBY and PEXPIRE run in one script: no gap"},
};

constexpr GenerationCell kClockSkewCells[] = {
    {"setnx", C::safe, "no client timestamps"},
    {"setnx-expire", C::safe, "the server counts the TTL"},
    {"getset-timestamp", C::me_violation, "the skewed contender judges a live lock expired and GETSETs it"},
    {"set-nx-px-token", C::safe, "the server counts the TTL"},
    {"lua-safe-delete", C::safe, "the server counts the TTL"},
    {"reentrant-watchdog", C::safe, "relative PEXPIRE; the watchdog uses monotonic time"},
    {"redlock", C::safe, "validity uses the client's monotonic elapsed time only"},
    {"fenced", C::safe, "the server counts the TTL"},
    {"fair-queue", C::safe, "waiter deadlines use the server's clock"},
    {"reentrant-watchdog+redisson", C::safe, "relative PEXPIRE; the watchdog and the wait use monotonic time"},
};

constexpr GenerationCell kFailoverCells[] = {
    {"setnx", C::me_violation, "the promoted replica never saw the key: a second holder"},
    {"setnx-expire", C::me_violation, "the promoted replica never saw the key: a second holder"},
    {"getset-timestamp", C::me_violation, "the promoted replica never saw the key: a second holder"},
    {"set-nx-px-token", C::me_violation, "the promoted replica never saw the key: a second holder"},
    {"lua-safe-delete", C::me_violation, "asynchronous replication loses the key (no WAIT guard here)"},
    {"reentrant-watchdog", C::me_violation, "asynchronous replication loses the hash (no WAIT guard here)"},
    {"redlock", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    {"fenced", C::me_violation, "the token counter goes back with the lost key: the new holder draws the old one's token, and the resource takes the old holder's write between the new one's read and write"},
    {"fair-queue", C::me_violation, "the promoted replica never saw the key: a second holder"},
    {"reentrant-watchdog+redisson", C::me_violation, "asynchronous replication loses the hash (no WAIT guard here); waiters retry every 30 ms, woken or not"},
};

constexpr GenerationCell kNodeMinorityCells[] = {
    {"redlock", C::safe, "3 of 5 nodes still form a majority"},
    {"reentrant-watchdog+redisson", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
};

constexpr GenerationCell kNodeRestartCells[] = {
    {"setnx", C::me_violation, "the only copy of the key vanished: the next SETNX wins"},
    {"setnx-expire", C::me_violation, "the only copy of the key vanished"},
    {"getset-timestamp", C::me_violation, "the key vanished: the next SETNX wins at once"},
    {"set-nx-px-token", C::me_violation, "the only copy of the key vanished"},
    {"lua-safe-delete", C::me_violation, "the only copy of the key vanished"},
    {"reentrant-watchdog", C::me_violation, "the hash vanished; renewal finds no key and stops"},
    {"redlock", C::me_violation, "a majority of the holder's nodes come back empty: a contender gets a quorum"},
    {"fenced", C::me_violation, "the token counter restarts empty with the node: the new holder draws the old one's token again, and the resource takes the old holder's write between the new one's read and write"},
    {"fair-queue", C::me_violation, "the key and the queue vanished"},
    {"reentrant-watchdog+redisson", C::me_violation, "the hash vanished; renewal finds no key and stops; waiters retry every 30 ms, woken or not"},
};

constexpr GenerationCell kClockJumpCells[] = {
    {"setnx", C::safe, "no TTL: nothing to expire"},
    {"setnx-expire", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    {"getset-timestamp", C::safe, "expiry is judged by client clocks; the server's clock is not used"},
    {"set-nx-px-token", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    {"lua-safe-delete", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    {"reentrant-watchdog", C::me_violation, "Redis expires the hash at once; the watchdog renews only an existing hash, and a polling waiter takes it"},
    {"redlock", C::me_violation, "the jumped node is one of the holder's bare majority: a contender wins it with the two free nodes (K2)"},
    {"fenced", C::safe, "the key expires early, but the resource refuses the old holder's token"},
    {"fair-queue", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    {"reentrant-watchdog+redisson", C::me_violation, "Redis expires the hash at once, publishing nothing; the watchdog renews only an existing hash, and a polling waiter takes it"},
};

constexpr GenerationCell kNetCutCells[] = {
    {"setnx", C::safe, "no TTL: the cut-off holder keeps the lock; the others only time out"},
    {"setnx-expire", C::me_violation, "the key expires while the cut-off holder still works"},
    {"getset-timestamp", C::me_violation, "the timestamp passes while the cut-off holder still works"},
    {"set-nx-px-token", C::me_violation, "the lease lapses while the cut-off holder still works"},
    {"lua-safe-delete", C::me_violation, "the lease lapses while the cut-off holder still works"},
    {"reentrant-watchdog", C::me_violation, "renewals cannot reach the server; the holder is not told"},
    {"redlock", C::me_violation, "the keys expire on every node; the holder is not told"},
    {"fenced", C::safe, "the lease lapses, the cut-off holder's stale token is refused"},
    {"fair-queue", C::me_violation, "the lease lapses while the cut-off holder still works"},
    {"reentrant-watchdog+redisson", C::me_violation, "renewals cannot reach the server; the holder is not told"},
};

constexpr GenerationCell kUnavailableReleaseCells[] = {
    {"setnx", C::deadlock, "the DEL never arrives: a key without TTL"},
    {"setnx-expire", C::liveness, "the key stays until its TTL"},
    {"getset-timestamp", C::liveness, "the timestamp stays until it passes"},
    {"set-nx-px-token", C::liveness, "the key stays until its TTL"},
    {"lua-safe-delete", C::liveness, "the key stays until its TTL"},
    {"reentrant-watchdog", C::liveness, "the hash stays until its lease ends: the cut-off owner can neither delete it nor renew it, nor re-enter it first"},
    {"redlock", C::liveness, "the keys stay until their TTL"},
    {"fenced", C::liveness, "the key stays until its TTL"},
    {"fair-queue", C::liveness, "the key stays until its TTL"},
    {"reentrant-watchdog+redisson", C::liveness, "the refused release publishes nothing: the hash stays until its lease ends and waiters sleep out its PTTL"},
};

}  // namespace

std::span<const MatrixColumn> matrix_columns() {
  static const std::vector<MatrixColumn> table = {
      {.heading = {.name = "holder-crash",
                   .title = "holder crash",
                   .anchor_row = "1",
                   .how = "holder-crash: SIGKILL-like death inside the critical section",
                   .bites = "the holder died inside its section (or after it, before its release returned), and another client "
                            "tried afterwards"},
       .plan = plan_holder_crash,
       .generations = kHolderCrashCells},
      {.heading = {.name = "holder-pause",
                   .title = "pause > TTL",
                   .anchor_row = "2",
                   .how = "holder-pause: SIGSTOP the holder process until another client acquired",
                   .bites = "the holder was stopped inside its section past its lease's earliest end, while another client tried"},
       .plan = plan_holder_pause,
       .generations = kHolderPauseCells,
       .doc_note = kOneWaiterForAQuorum},
      {.heading = {.name = "slow-holder",
                   .title = "slow CS > TTL",
                   .anchor_row = "3",
                   .how = "slow-holder: one critical section lasts 3 x ttl, process alive",
                   .bites = "the section outlived its lease's earliest end while another client tried"},
       .plan = plan_slow_holder,
       .generations = kSlowHolderCells,
       .doc_note = kOneWaiterForAQuorum},
      {.heading = {.name = "release-race",
                   .title = "check-then-DEL",
                   .anchor_row = "4",
                   .how = "holder-pause at the release window until another client got in and is inside",
                   .bites = "the holder was stopped in its release window until another client had entered, and that client was "
                            "still inside when it went on"},
       .plan = plan_release_race,
       .not_applicable = release_race_not_applicable,
       .needs_declaration = true,
       .generations = kReleaseRaceCells},
      {.heading = {.name = "expire-gap",
                   .title = "SETNX/EXPIRE gap",
                   .anchor_row = "5",
                   .how = "holder-crash at after-setnx-before-expire",
                   .bites = "the holder died between the two commands, leaving a key with no TTL, and another client tried "
                            "afterwards"},
       .plan = plan_expire_gap,
       .not_applicable = expire_gap_not_applicable,
       .needs_declaration = true,
       .generations = kExpireGapCells},
      {.heading = {.name = "clock-skew",
                   .title = "client clock skew",
                   .anchor_row = "6",
                   .how = "clock-skew: client 1's wall clock 5 x ttl ahead",
                   .bites = "the skewed client, its clock ahead, tried while another client's lease was live and its clock read "
                            "that lease as over"},
       .plan = plan_clock_skew,
       .not_applicable = clock_skew_not_applicable,
       .generations = kClockSkewCells,
       .doc_note = kOneWaiterForAQuorum},
      {.heading = {.name = "failover",
                   .title = "failover",
                   .anchor_row = "7",
                   .how = "failover: replication held, master killed, replica promoted after the first acquire",
                   .bites = "the master was failed over while the holder was inside, and another client tried while it still was"},
       .timed = true,
       .plan = plan_failover,
       .not_applicable = failover_not_applicable,
       .generations = kFailoverCells},
      {.heading = {.name = "node-minority",
                   .title = "minority crash",
                   .anchor_row = "8",
                   .how = "node-crash: 2 of 5 nodes killed at start, never restarted (a row that catches its waiters: two clients, their first round split)",
                   .bites = "a minority of the lock's nodes was down while clients tried to acquire"},
       .timed = true,
       .plan = plan_node_minority,
       .not_applicable = node_minority_not_applicable,
       .needs_declaration = true,
       .generations = kNodeMinorityCells,
       .rule = node_minority_rule},
      {.heading = {.name = "node-restart",
                   .title = "restart, no persistence",
                   .anchor_row = "9",
                   .how = "node-crash: the holder's node (Redlock: a majority) killed and restarted empty at once",
                   .bites = "the restarted node(s) came back without the holder's key (a majority of them lost it) while it was "
                            "inside, and another client tried while it still was"},
       .timed = true,
       .plan = plan_node_restart,
       .generations = kNodeRestartCells},
      {.heading = {.name = "clock-jump",
                   .title = "node clock jump",
                   .anchor_row = "10",
                   .how = "clock-jump: node 0's wall clock +10 x ttl while a holder is inside (Redlock: one of its 3 nodes); "
                          "one waiter polls every 30 ms",
                   .bites = "a node holding the holder's key jumped past that key's lease and lost it (a key with no TTL: "
                            "past a lease of one ttl) while the holder was inside, and another client tried while it still was"},
       .timed = true,
       .plan = plan_clock_jump,
       .generations = kClockJumpCells,
       .doc_note = "Every lock runs with one waiter beside the holder: two waiters whose 30 ms\n"
                   "attempts overlap can keep each other out where the lock would admit either\n"
                   "(a fair queue's head changing with every attempt, two Redlock contenders\n"
                   "each holding a free node the other needs), and the cell would read `safe`\n"
                   "by luck (`plan_clock_jump()` in `harness/sweeps/matrix_columns.cpp`)."},
      {.heading = {.name = "net-cut",
                   .title = "net: holder cut",
                   .anchor_row = "11a",
                   .how = "net cut: the holder loses its lock-server links while it works 2 x ttl",
                   .bites = "the holder was cut off past its lease's earliest end while another client tried"},
       .timed = true,
       .plan = plan_net_cut,
       .generations = kNetCutCells},
      {.heading = {.name = "unavailable-release",
                   .title = "unavailable: release",
                   .anchor_row = "12",
                   .how = "unavailable: the release is refused",
                   .bites = "the holder's release could not reach the server, and another client tried from then on"},
       .timed = true,
       .plan = plan_unavailable_release,
       .generations = kUnavailableReleaseCells},
  };
  return table;
}

std::string catch_waiters_problem(const LockDescription& lock) {
  for (const auto& [column, pattern] : lock.catch_waiters) {
    if (column != "failover" && column != "node-restart" && column != "node-minority")
      return "catches the waiters of '" + column + "': only failover, node-restart and node-minority catch them "
             "(catch_waiters)";
    if (column == "node-minority" && !lock.capabilities.multi_node)
      return "catches the waiters of node-minority, which splits the votes of a quorum lock's first round: it "
             "claims no multi_node (catch_waiters)";
    if (column == "failover" && lock.failover_topology == "cluster")
      return "catches the waiters of its failover, which runs on a Redis Cluster: no per-client links to catch them "
             "at (catch_waiters)";
  }
  return "";
}

std::string park_holder_problem(const LockDescription& lock) {
  for (const auto& [column, plan] : lock.park_holder) {
    if (column != "failover" && column != "node-restart")
      return "parks the holder of '" + column + "': only failover and node-restart take where and when (park_holder)";
    if (column == "failover" && lock.failover_topology == "cluster")
      return "parks the holder of its failover, which runs on a Redis Cluster and acts on refused acquires, not on a "
             "parked holder (park_holder)";
  }
  return "";
}

std::string catalog_plan_problem(const LockDescription& lock) {
  if (std::string problem = catch_waiters_problem(lock); !problem.empty()) return problem;
  return park_holder_problem(lock);
}

const MatrixColumn* find_matrix_column(std::string_view name, std::span<const MatrixColumn> table) {
  for (const auto& column : table)
    if (column.heading.name == name) return &column;
  return nullptr;
}

std::string column_not_applicable(const LockDescription& lock, const MatrixColumn& column) {
  if (!lock.capabilities.uses_redis) return "no Redis lock to fault";
  if (column.needs_declaration && users_own(lock) && !lock.from_catalog && !lock.declared_in_init_ok)
    return lock.name + ": nothing declares what this column needs (its init_ok could not be read before the run; "
                       "a --catalog entry can declare it: docs/adapters.md)";
  return column.not_applicable != nullptr ? column.not_applicable(lock) : "";
}

// Each column with the cells of the Redis generations (not their variants:
// docs/generations.md lists those), in the registry's order, as written.
std::vector<ColumnDoc> columns_doc(std::span<const MatrixColumn> table) {
  std::vector<ColumnDoc> docs;
  for (const auto& column : table) {
    ColumnDoc doc{column.heading, column.doc_note, {}};
    for (const auto& generation : generations()) {
      if (!generation.capabilities.uses_redis) continue;
      if (auto expectation = expected_cell(generation.name, column.heading.name, table))
        doc.rows.push_back({generation.name, expected_text(*expectation), expectation->reason});
    }
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace locklab::harness
