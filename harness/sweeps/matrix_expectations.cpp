#include "sweeps/matrix_expectations.h"

#include <array>
#include <span>

#include "registry.h"

#include "sweeps/matrix_columns.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {
namespace {

using C = CellClass;

struct Row {
  std::string_view lock;
  std::string_view fault;
  CellClass expected;
  std::string_view reason;
  std::optional<CellClass> or_else = std::nullopt;
  bool exposed = false;
  bool exposed_either = false;
  // A third class, for the one cell whose schedule leaves three endings
  // (ext:redisson-fenced x node-restart: docs/peers.md says which and why).
  std::optional<CellClass> or_else_too = std::nullopt;
};

// The peer libraries' rows (`ext:NAME`, issue 18): each cell derived from the
// library's source before its first run. Keep in step with docs/peers.md,
// "Expected cells of the peers" (same cells, same reasons; the source lines
// are cited there). A peer is no Generation: the capability rules of
// expected_cell() do not reach it, so its n/a cells are written out here.
constexpr std::array kPeerCells = {
    // --- ext:redis-py ---
    Row{"ext:redis-py", "holder-crash", C::liveness, "SET NX PX: the dead holder's key expires after one ttl"},
    Row{"ext:redis-py", "holder-pause", C::me_violation, "nothing extends the lease: it lapses under the stopped holder"},
    Row{"ext:redis-py", "slow-holder", C::me_violation, "extend() is manual: the lease lapses while the holder still works"},
    Row{"ext:redis-py", "release-race", C::safe, "release is one compare-and-delete script: the late EVALSHA deletes nothing"},
    Row{"ext:redis-py", "expire-gap", C::not_applicable, "SET NX PX is one command: no gap"},
    Row{"ext:redis-py", "clock-skew", C::safe, "the server counts the TTL; the wait reads time.monotonic()"},
    Row{"ext:redis-py", "failover", C::me_violation, "the promoted replica never saw the key: a second holder"},
    Row{"ext:redis-py", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redis-py", "node-restart", C::me_violation, "the only copy of the key vanished"},
    Row{"ext:redis-py", "clock-jump", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    Row{"ext:redis-py", "net-cut", C::me_violation, "the lease lapses while the cut-off holder still works"},
    Row{"ext:redis-py", "unavailable-release", C::liveness, "the refused EVALSHA raises at once (no retry); the key stays until its TTL"},
    // --- ext:node-redlock ---
    Row{"ext:node-redlock", "holder-crash", C::liveness, "the keys expire on every node after one ttl"},
    Row{"ext:node-redlock", "holder-pause", C::me_violation, "validity is checked once, at acquire: a pause later is unseen"},
    Row{"ext:node-redlock", "slow-holder", C::me_violation, "extend() is manual: the validity runs out while the holder still works"},
    Row{"ext:node-redlock", "release-race", C::safe, "unlock is a compare-and-delete script on every node"},
    Row{"ext:node-redlock", "expire-gap", C::not_applicable, "one script checks EXISTS and sets PX on each node: no gap"},
    Row{"ext:node-redlock", "clock-skew", C::safe, "validity compares two readings of one local Date.now(): a constant offset cancels"},
    Row{"ext:node-redlock", "failover", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    Row{"ext:node-redlock", "node-minority", C::liveness, "an attempt waits for all 5 answers (redlock.js:411); at ioredis's defaults a dead node's command waits about 73 s in the offline queue (RedisOptions.js:46,57): the acquire blocks past its wait bound"},
    Row{"ext:node-redlock", "node-restart", C::me_violation, "3 of the holder's nodes come back empty: a contender gets a quorum"},
    Row{"ext:node-redlock", "clock-jump", C::me_violation, "the jumped node is one of the holder's bare majority: a contender wins it with the two free nodes"},
    Row{"ext:node-redlock", "net-cut", C::me_violation, "the keys expire on every node; the holder is not told"},
    Row{"ext:node-redlock", "unavailable-release", C::liveness, "the refused unlock waits in ioredis's offline queue (the in-flight script is resent, event_handler.js:416): the release blocks past its bound; the keys stay until their TTL"},
    // --- ext:node-redlock+failfast (its other cells: ext:node-redlock's) ---
    Row{"ext:node-redlock+failfast", "node-minority", C::safe, "a dead node votes no at once (no offline queue): 3 of 5 nodes still form a quorum"},
    Row{"ext:node-redlock+failfast", "unavailable-release", C::liveness, "unlock rejects without a quorum (no offline queue); the keys stay until their TTL"},
    // --- ext:sesamecare-redlock ---
    Row{"ext:sesamecare-redlock", "holder-crash", C::liveness, "the extension timer dies with the process: the keys expire after one ttl"},
    Row{"ext:sesamecare-redlock", "holder-pause", C::me_violation, "SIGSTOP freezes the extension timer too: the lease lapses"},
    Row{"ext:sesamecare-redlock", "slow-holder", C::safe, "using() extends the lease on a quorum while the routine runs; a stall needs three attempts splitting the five nodes at once, which the default 100 ms retry jitter keeps apart in most runs, not all (0 of 8 runs, then 1 stall of 1.6 s in the first all-rows matrix): no schedule of the column lines three attempts up or keeps them apart", C::liveness},
    Row{"ext:sesamecare-redlock", "release-race", C::safe, "the release script deletes only its own value, on every node; two clients on five nodes: one always takes three"},
    Row{"ext:sesamecare-redlock", "expire-gap", C::not_applicable, "the acquire script sets each key with PX: no gap"},
    Row{"ext:sesamecare-redlock", "clock-skew", C::safe, "extension timing compares readings of one local Date.now(): a constant offset cancels; a stall needs three attempts splitting the five nodes at once, kept apart by the default retry jitter in most runs, not all (as slow-holder): no schedule of the column lines three attempts up or keeps them apart", C::liveness},
    Row{"ext:sesamecare-redlock", "failover", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    Row{"ext:sesamecare-redlock", "node-minority", C::liveness, "an attempt resolves at a quorum either way: two contenders that split the 3 live nodes reach neither and wait for a dead node's vote, about 73 s at ioredis's defaults: blocked past the wait bound; whether two attempts meet on the nodes within a millisecond is an interleaving the column does not fix (9 of 10 runs), else safe", C::safe},
    Row{"ext:sesamecare-redlock", "node-restart", C::me_violation, "3 nodes come back empty: a contender gets a quorum; the next extension fails"},
    Row{"ext:sesamecare-redlock", "clock-jump", C::me_violation, "the extend script does not recreate the jumped key: the holder keeps 2 of 5, a contender wins 3"},
    Row{"ext:sesamecare-redlock", "net-cut", C::me_violation, "extensions cannot reach the nodes; the abort signal comes only once the lease is over"},
    Row{"ext:sesamecare-redlock", "unavailable-release", C::liveness, "using()'s release waits in ioredis's offline queue (the in-flight script is resent): it blocks past its bound; the keys stay until their TTL"},
    // --- ext:redis-semaphore ---
    Row{"ext:redis-semaphore", "holder-crash", C::liveness, "the refresh interval dies with the process: the key expires after one ttl"},
    Row{"ext:redis-semaphore", "holder-pause", C::me_violation, "SIGSTOP freezes the refresh timer too: the lease lapses"},
    Row{"ext:redis-semaphore", "slow-holder", C::safe, "the live refresh re-sets the PX every 0.8 x ttl while the holder works"},
    Row{"ext:redis-semaphore", "release-race", C::safe, "release stops the refresh, then one compare-and-delete script: the late EVALSHA deletes nothing"},
    Row{"ext:redis-semaphore", "expire-gap", C::not_applicable, "SET NX PX is one command: no gap"},
    Row{"ext:redis-semaphore", "clock-skew", C::safe, "the server counts the TTL; the acquire deadline compares one local clock with itself"},
    Row{"ext:redis-semaphore", "failover", C::me_violation, "the promoted replica never saw the key: a second holder; the refresh then reports the loss"},
    Row{"ext:redis-semaphore", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redis-semaphore", "node-restart", C::me_violation, "the only copy of the key vanished; the refresh then reports the loss"},
    Row{"ext:redis-semaphore", "clock-jump", C::me_violation, "the key is gone at once; the refresh re-sets only a key that still holds its id"},
    Row{"ext:redis-semaphore", "net-cut", C::me_violation, "refreshes cannot reach the server; onLockLost fires only once the link is back"},
    Row{"ext:redis-semaphore", "unavailable-release", C::liveness, "release() stops the refresh, then its script waits in ioredis's offline queue (resent after the refused connection): it blocks past its bound; the key stays until its TTL"},
    // --- ext:redis-lock ---
    Row{"ext:redis-lock", "holder-crash", C::liveness, "SET PX NX: the dead holder's key expires after one ttl"},
    Row{"ext:redis-lock", "holder-pause", C::me_violation, "no extension at all: the lease lapses under the stopped holder"},
    Row{"ext:redis-lock", "slow-holder", C::me_violation, "no extension at all: the lease lapses while the holder still works"},
    Row{"ext:redis-lock", "release-race", C::me_violation, "release checks only the local clock, then a blind DEL: the late DEL deletes the new holder's key"},
    Row{"ext:redis-lock", "expire-gap", C::not_applicable, "SET PX NX is one command: no gap"},
    Row{"ext:redis-lock", "clock-skew", C::safe, "the stored timestamp is read back only by the client that wrote it: a constant offset cancels"},
    Row{"ext:redis-lock", "failover", C::me_violation, "the promoted replica never saw the key: a second holder"},
    Row{"ext:redis-lock", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redis-lock", "node-restart", C::me_violation, "the only copy of the key vanished"},
    Row{"ext:redis-lock", "clock-jump", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    Row{"ext:redis-lock", "net-cut", C::me_violation, "the lease lapses while the cut-off holder still works"},
    Row{"ext:redis-lock", "unavailable-release", C::liveness, "the refused DEL rejects; the key stays until its TTL"},
    // --- ext:node-redis-warlock ---
    Row{"ext:node-redis-warlock", "holder-crash", C::liveness, "SET PX NX: the dead holder's key expires after one ttl"},
    Row{"ext:node-redis-warlock", "holder-pause", C::me_violation, "touch() is manual: the lease lapses under the stopped holder"},
    Row{"ext:node-redis-warlock", "slow-holder", C::me_violation, "touch() is manual: the lease lapses while the holder still works"},
    Row{"ext:node-redis-warlock", "release-race", C::safe, "unlock is one compare-and-delete script: the late EVALSHA deletes nothing"},
    Row{"ext:node-redis-warlock", "expire-gap", C::not_applicable, "SET PX NX is one command: no gap"},
    Row{"ext:node-redis-warlock", "clock-skew", C::safe, "the server counts the TTL; no client clock is read"},
    Row{"ext:node-redis-warlock", "failover", C::me_violation, "the promoted replica never saw the key: a second holder"},
    Row{"ext:node-redis-warlock", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:node-redis-warlock", "node-restart", C::me_violation, "the only copy of the key vanished"},
    Row{"ext:node-redis-warlock", "clock-jump", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    Row{"ext:node-redis-warlock", "net-cut", C::me_violation, "the lease lapses while the cut-off holder still works"},
    Row{"ext:node-redis-warlock", "unavailable-release", C::liveness, "node-redis 3 fails the in-flight EVALSHA on the lost connection (retry_unfulfilled_commands false, redis3/index.js:599-603) and unlock swallows the error: the key stays until its TTL"},
    // --- ext:simple-redis-mutex ---
    Row{"ext:simple-redis-mutex", "holder-crash", C::liveness, "SET NX PX: the key expires after one ttl; no release is published, waiters find it by polling"},
    Row{"ext:simple-redis-mutex", "holder-pause", C::me_violation, "refreshTimeout() is manual: the lease lapses under the stopped holder"},
    Row{"ext:simple-redis-mutex", "slow-holder", C::me_violation, "refreshTimeout() is manual: the lease lapses while the holder still works"},
    Row{"ext:simple-redis-mutex", "release-race", C::safe, "release is one script that compares the value before DEL and PUBLISH: the late EVALSHA deletes nothing"},
    Row{"ext:simple-redis-mutex", "expire-gap", C::not_applicable, "SET NX PX is one command: no gap (the fencing INCR comes after it)"},
    Row{"ext:simple-redis-mutex", "clock-skew", C::safe, "no client clock is read at all"},
    Row{"ext:simple-redis-mutex", "failover", C::me_violation, "a waiter's first SET once node-redis is back wins the promoted replica: a second holder if it belongs to a lock() still waiting; if a lock() that failAfter already rejected queued it, the win is nobody's and keeps everyone out for a lease (which queued attempt node-redis writes first is its reconnect's timing)", C::liveness, false, /*exposed_either=*/true},
    Row{"ext:simple-redis-mutex", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:simple-redis-mutex", "node-restart", C::liveness, "the restart resets the waiters' connections: a lock() attempt that rejects is unhandled and Node ends that service (a crashed client); a SET a lock() queued before its failAfter fired wins the empty node for nobody: everyone kept out for a lease", std::nullopt, false, /*exposed_either=*/true},
    Row{"ext:simple-redis-mutex", "clock-jump", C::me_violation, "Redis expires the key at once: a polling waiter takes it while the holder works"},
    Row{"ext:simple-redis-mutex", "net-cut", C::me_violation, "the lease lapses while the cut-off holder still works"},
    Row{"ext:simple-redis-mutex", "unavailable-release", C::liveness, "the refused EVALSHA rejects; the key stays until its TTL"},
    // --- ext:redlock-universal ---
    Row{"ext:redlock-universal", "holder-crash", C::liveness, "the extension loop dies with the process: the keys expire after one ttl"},
    Row{"ext:redlock-universal", "holder-pause", C::me_violation, "SIGSTOP freezes the extension loop too: the lease lapses"},
    Row{"ext:redlock-universal", "slow-holder", C::safe, "using() extends on a quorum while the routine runs (back to back below a 1250 ms ttl)"},
    Row{"ext:redlock-universal", "release-race", C::safe, "release is a compare-and-delete script on every node"},
    Row{"ext:redlock-universal", "expire-gap", C::not_applicable, "SET NX PX on each node: no gap"},
    Row{"ext:redlock-universal", "clock-skew", C::safe, "validity and extension timing use differences of one local Date.now()"},
    Row{"ext:redlock-universal", "failover", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    Row{"ext:redlock-universal", "node-minority", C::liveness, "an attempt awaits all 5 SETs (Promise.allSettled, index.cjs:1176); at ioredis's defaults a dead node's waits in the offline queue until the adapter's 5 s withTimeout (index.cjs:274, 392): the acquire blocks past its wait bound"},
    Row{"ext:redlock-universal", "node-restart", C::me_violation, "3 nodes come back empty: a contender gets a quorum; the next extension fails"},
    Row{"ext:redlock-universal", "clock-jump", C::me_violation, "extendIfMatch does not recreate the jumped key: the holder keeps 2 of 5, a contender wins 3"},
    Row{"ext:redlock-universal", "net-cut", C::me_violation, "the first failed extension aborts the signal; the keys expire on every node"},
    Row{"ext:redlock-universal", "unavailable-release", C::liveness, "using()'s release waits in ioredis's offline queue (the in-flight script is resent): the release blocks past its bound; the keys stay until their TTL"},
    // --- ext:redlock-universal+failfast (its other cells: ext:redlock-universal's) ---
    Row{"ext:redlock-universal+failfast", "node-minority", C::safe, "a dead node's SET fails at once (no offline queue): 3 of 5 nodes still form a quorum"},
    Row{"ext:redlock-universal+failfast", "unavailable-release", C::liveness, "the keys stay until their TTL; using() swallows the refused release, so the client hears released", std::nullopt, false, /*exposed_either=*/true},
    // --- ext:node-redisson ---
    Row{"ext:node-redisson", "holder-crash", C::liveness, "the watchdog dies with the process: free after one lease"},
    Row{"ext:node-redisson", "holder-pause", C::me_violation, "SIGSTOP freezes the watchdog too: the lease lapses"},
    Row{"ext:node-redisson", "slow-holder", C::safe, "the live watchdog renews the lease every ttl/3"},
    Row{"ext:node-redisson", "release-race", C::safe, "the unlock script checks the owner field atomically"},
    Row{"ext:node-redisson", "expire-gap", C::not_applicable, "HINCRBY and PEXPIRE run in one script: no gap"},
    Row{"ext:node-redisson", "clock-skew", C::safe, "relative PEXPIRE; the wait compares one local Date.now() with itself"},
    Row{"ext:node-redisson", "failover", C::me_violation, "asynchronous replication loses the hash; the watchdog then stops without telling anyone"},
    Row{"ext:node-redisson", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:node-redisson", "node-restart", C::me_violation, "the hash vanished; renewal finds no field and stops"},
    Row{"ext:node-redisson", "clock-jump", C::me_violation, "Redis expires the hash at once; the watchdog renews only an existing field"},
    Row{"ext:node-redisson", "net-cut", C::me_violation, "a failed renewal stops the watchdog for good; the holder is not told"},
    Row{"ext:node-redisson", "unavailable-release", C::liveness, "the hash stays until its lease ends: the watchdog the failed unlock left running cannot renew it from the cut-off owner"},
    // --- ext:go-redsync (one node) ---
    Row{"ext:go-redsync", "holder-crash", C::liveness, "SET NX PX: the dead holder's key expires after one ttl"},
    Row{"ext:go-redsync", "holder-pause", C::me_violation, "nothing extends the lease: it lapses under the stopped holder"},
    Row{"ext:go-redsync", "slow-holder", C::me_violation, "Extend() is manual: the lease lapses while the holder still works"},
    Row{"ext:go-redsync", "release-race", C::safe, "Unlock is one compare-and-delete script: the late EVALSHA deletes nothing"},
    Row{"ext:go-redsync", "expire-gap", C::not_applicable, "SET NX PX is one command: no gap"},
    Row{"ext:go-redsync", "clock-skew", C::not_applicable, "a Go binary reads the clock through the vDSO, not libc: the LD_PRELOAD clock shim cannot skew it"},
    Row{"ext:go-redsync", "failover", C::me_violation, "the promoted replica never saw the key: a second holder"},
    Row{"ext:go-redsync", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:go-redsync", "node-restart", C::me_violation, "the only copy of the key vanished"},
    Row{"ext:go-redsync", "clock-jump", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    Row{"ext:go-redsync", "net-cut", C::me_violation, "the lease lapses while the cut-off holder still works"},
    Row{"ext:go-redsync", "unavailable-release", C::liveness, "the refused delete script fails (go-redis retries, then gives up); the key stays until its TTL"},
    // --- ext:go-redsync-5 (a Redlock over five masters) ---
    Row{"ext:go-redsync-5", "holder-crash", C::liveness, "the keys expire on every node after one ttl"},
    Row{"ext:go-redsync-5", "holder-pause", C::me_violation, "validity is checked once, at acquire: a pause later is unseen"},
    Row{"ext:go-redsync-5", "slow-holder", C::me_violation, "Extend() is manual: the validity runs out while the holder still works"},
    Row{"ext:go-redsync-5", "release-race", C::safe, "Unlock is a compare-and-delete script on every node"},
    Row{"ext:go-redsync-5", "expire-gap", C::not_applicable, "SET NX PX on each node is one command: no gap"},
    Row{"ext:go-redsync-5", "clock-skew", C::not_applicable, "a Go binary reads the clock through the vDSO, not libc: the LD_PRELOAD clock shim cannot skew it"},
    Row{"ext:go-redsync-5", "failover", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    Row{"ext:go-redsync-5", "node-minority", C::liveness, "3 of 5 nodes still form a quorum, but Unlock waits for every node, and go-redis at its defaults keeps redialling a dead one: each release answers error after 1.5 s"},
    Row{"ext:go-redsync-5", "node-restart", C::me_violation, "3 of the holder's nodes come back empty: a contender gets a quorum"},
    Row{"ext:go-redsync-5", "clock-jump", C::me_violation, "the jumped node is one of the holder's bare majority: a contender wins it with the two free nodes"},
    Row{"ext:go-redsync-5", "net-cut", C::me_violation, "the keys expire on every node; the holder is not told"},
    Row{"ext:go-redsync-5", "unavailable-release", C::liveness, "Unlock fails without a quorum; the keys stay until their TTL"},
    // --- ext:bsm-redislock (with the refresh its README shows, every ttl/2) ---
    Row{"ext:bsm-redislock", "holder-crash", C::liveness, "the refresh goroutine dies with the process: the key expires after one ttl"},
    Row{"ext:bsm-redislock", "holder-pause", C::me_violation, "SIGSTOP freezes the refresh goroutine too: the lease lapses"},
    Row{"ext:bsm-redislock", "slow-holder", C::safe, "the live refresh re-sets the PX every ttl/2 while the holder works"},
    Row{"ext:bsm-redislock", "release-race", C::safe, "Release is one compare-and-delete script: the late EVALSHA deletes nothing"},
    Row{"ext:bsm-redislock", "expire-gap", C::not_applicable, "the obtain script sets the key with NX PX in one command: no gap"},
    Row{"ext:bsm-redislock", "clock-skew", C::not_applicable, "a Go binary reads the clock through the vDSO, not libc: the LD_PRELOAD clock shim cannot skew it"},
    Row{"ext:bsm-redislock", "failover", C::me_violation, "the promoted replica never saw the key: a second holder; the refresh then reports the loss"},
    Row{"ext:bsm-redislock", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:bsm-redislock", "node-restart", C::me_violation, "the only copy of the key vanished; the refresh then reports the loss"},
    Row{"ext:bsm-redislock", "clock-jump", C::me_violation, "the key is gone at once; the refresh script re-sets only a key that still holds its value"},
    Row{"ext:bsm-redislock", "net-cut", C::me_violation, "refreshes cannot reach the server: the lease lapses while the cut-off holder works"},
    Row{"ext:bsm-redislock", "unavailable-release", C::liveness, "the refused release fails after the refresh was stopped: the key stays until its TTL"},
};

// The Java rows (Redisson; docs/peers.md, "Redisson"): a table of their own, so that the rows
// of the JavaScript and Python peers above change without touching them.
constexpr std::array kJavaPeerCells = {
    // --- ext:redisson-3.18.1 ---
    Row{"ext:redisson-3.18.1", "holder-crash", C::liveness, "the watchdog is a timer of the dead JVM: the hash is free after one lease"},
    Row{"ext:redisson-3.18.1", "holder-pause", C::me_violation, "SIGSTOP freezes the JVM and its watchdog: the lease lapses"},
    Row{"ext:redisson-3.18.1", "slow-holder", C::safe, "the live watchdog renews the lease every ttl/3"},
    Row{"ext:redisson-3.18.1", "release-race", C::safe, "the unlock script checks the owner field atomically: the late EVAL deletes nothing"},
    Row{"ext:redisson-3.18.1", "expire-gap", C::not_applicable, "HINCRBY and PEXPIRE run in one script: no gap"},
    Row{"ext:redisson-3.18.1", "clock-skew", C::safe, "relative PEXPIRE; the wait subtracts two readings of one local clock"},
    Row{"ext:redisson-3.18.1", "failover", C::liveness, "on seed 000's Redis Cluster (useClusterServers()): the lock script, then WAIT 1 s for the replica (RedissonBaseLock.java:208-240); no replica acknowledges the held write, so tryLock throws 'None of slaves were synced' (checkLockSyncedSlaves, Config.java:73) with the hash left on the master: no client is told it holds an unreplicated lock; the failover loses the key with nobody inside (the fault's bite: every acquire refused meanwhile); the refusals block past the wait bound: liveness; or, while the slot moves, two holders: the WAIT is sized by the master's INFO REPLICATION connected_slaves at that moment (RedissonBaseLock.java:212-218, 247-248; no WAIT for 0, CommandBatchService.java:245-250) and checked only when it was above 0 (:229-230), so the old master, its replica just promoted (none connected), grants (traced: to the client whose failed acquire left its field there, :226-233 throwing and RedissonLock.java:179-189 undoing nothing), and the new master, no replica yet, grants another client: me-violation", C::me_violation},
    Row{"ext:redisson-3.18.1", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redisson-3.18.1", "node-restart", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout and retries (Config's defaults): blocked past wait_ms + 1 s; or a retry, 1.5 s later (retryInterval, no jitter in this version), reaches the restarted, empty server while the holder works: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-3.18.1", "clock-jump", C::me_violation, "Redis expires the hash at once; the watchdog renews only an existing field"},
    Row{"ext:redisson-3.18.1", "net-cut", C::me_violation, "a failed renewal stops the watchdog for good; the holder is not told"},
    Row{"ext:redisson-3.18.1", "unavailable-release", C::liveness, "the refused unlock retries 3 times 1.5 s apart (Config's defaults): it blocks past the kit's 1.5 s answer bound"},
    // --- ext:redisson-3.18.1+trylock ---
    Row{"ext:redisson-3.18.1+trylock", "holder-crash", C::liveness, "a fixed lease: the dead holder's hash expires after one ttl"},
    Row{"ext:redisson-3.18.1+trylock", "holder-pause", C::me_violation, "nothing extends the lease: it lapses under the stopped holder"},
    Row{"ext:redisson-3.18.1+trylock", "slow-holder", C::me_violation, "tryLock with a lease starts no watchdog: the lease lapses while the holder still works"},
    Row{"ext:redisson-3.18.1+trylock", "release-race", C::safe, "the unlock script checks the owner field atomically: the late EVAL deletes nothing"},
    Row{"ext:redisson-3.18.1+trylock", "expire-gap", C::not_applicable, "HINCRBY and PEXPIRE run in one script: no gap"},
    Row{"ext:redisson-3.18.1+trylock", "clock-skew", C::safe, "relative PEXPIRE; the wait subtracts two readings of one local clock"},
    Row{"ext:redisson-3.18.1+trylock", "failover", C::liveness, "on seed 000's Redis Cluster: the lock script, then WAIT 1 s (RedissonBaseLock.java:208-240); no replica acknowledges, tryLock throws 'None of slaves were synced' (Config.java:73): no client is told it holds an unreplicated lock; the failover loses the key with nobody inside (every acquire refused meanwhile), the refusals blocking past the wait bound: liveness; or, while the slot moves, two holders: no WAIT on a master with no replica connected (RedissonBaseLock.java:212-218, 229-230): the old master, its replica just promoted, grants (traced: the owner of the field a failed acquire left re-enters), the new master grants another client: me-violation", C::me_violation},
    Row{"ext:redisson-3.18.1+trylock", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redisson-3.18.1+trylock", "node-restart", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout and retries (Config's defaults): blocked past wait_ms + 1 s; or a retry, 1.5 s later (retryInterval, no jitter in this version), reaches the restarted, empty server while the holder works: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-3.18.1+trylock", "clock-jump", C::me_violation, "Redis expires the hash by its wall clock: it is gone at once"},
    Row{"ext:redisson-3.18.1+trylock", "net-cut", C::me_violation, "the lease lapses while the cut-off holder still works"},
    Row{"ext:redisson-3.18.1+trylock", "unavailable-release", C::liveness, "the refused unlock retries 3 times 1.5 s apart (Config's defaults): it blocks past the kit's 1.5 s answer bound"},
    // --- ext:redisson ---
    Row{"ext:redisson", "holder-crash", C::liveness, "the watchdog is a timer of the dead JVM: the hash is free after one lease"},
    Row{"ext:redisson", "holder-pause", C::me_violation, "SIGSTOP freezes the JVM and its watchdog: the lease lapses"},
    Row{"ext:redisson", "slow-holder", C::safe, "the live watchdog renews the lease every ttl/3"},
    Row{"ext:redisson", "release-race", C::safe, "the unlock script checks the owner field atomically: the late EVALSHA deletes nothing"},
    Row{"ext:redisson", "expire-gap", C::not_applicable, "HINCRBY and PEXPIRE run in one script: no gap"},
    Row{"ext:redisson", "clock-skew", C::safe, "relative PEXPIRE; the wait subtracts two readings of one local clock"},
    Row{"ext:redisson", "failover", C::liveness, "on seed 000's Redis Cluster: the lock script, then WAIT 1 s for the replica (CommandAsyncService.java:1162-1225); no replica acknowledges: NoSyncedSlavesException, and the acquire unlocks the hash it just took (RedissonBaseLock.java:281-283): no holder: the failover loses a key nobody was told they hold (the fault's bite: every acquire refused meanwhile); the refusals block past the wait bound: liveness"},
    Row{"ext:redisson", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redisson", "node-restart", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout (Config's defaults): blocked past wait_ms + 1 s; or a retry, 0.5 s to 2 s later (EqualJitterDelay), reaches the empty server while the holder works: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson", "clock-jump", C::me_violation, "Redis expires the hash at once; the watchdog renews only an existing field"},
    Row{"ext:redisson", "net-cut", C::me_violation, "the watchdog retries after a failed renewal, but none reaches the server before the lease lapses; the holder is not told"},
    Row{"ext:redisson", "unavailable-release", C::liveness, "the refused unlock retries 4 times 1.5 s apart (Config's defaults): it blocks past the kit's 1.5 s answer bound"},
    // --- ext:redisson+failfast (timeout 1000 ms, no retries: the fail-fast client) ---
    Row{"ext:redisson+failfast", "holder-crash", C::liveness, "the watchdog is a timer of the dead JVM: the hash is free after one lease"},
    Row{"ext:redisson+failfast", "holder-pause", C::me_violation, "SIGSTOP freezes the JVM and its watchdog: the lease lapses"},
    Row{"ext:redisson+failfast", "slow-holder", C::safe, "the live watchdog renews the lease every ttl/3"},
    Row{"ext:redisson+failfast", "release-race", C::safe, "the unlock script checks the owner field atomically: the late EVALSHA deletes nothing"},
    Row{"ext:redisson+failfast", "expire-gap", C::not_applicable, "HINCRBY and PEXPIRE run in one script: no gap"},
    Row{"ext:redisson+failfast", "clock-skew", C::safe, "relative PEXPIRE; the wait subtracts two readings of one local clock"},
    Row{"ext:redisson+failfast", "failover", C::liveness, "on seed 000's Redis Cluster: WAIT 1 s after the lock script (CommandAsyncService.java:1162-1225); no replica acknowledges: NoSyncedSlavesException, and the acquire unlocks its hash (RedissonBaseLock.java:281-283): no holder: the failover loses a key nobody was told they hold (every acquire refused meanwhile), the refusals blocking past the wait bound: liveness"},
    Row{"ext:redisson+failfast", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redisson+failfast", "node-restart", C::me_violation, "the hash vanished; the renewal finds no field and drops the lock from the watchdog"},
    Row{"ext:redisson+failfast", "clock-jump", C::me_violation, "Redis expires the hash at once; the watchdog renews only an existing field"},
    Row{"ext:redisson+failfast", "net-cut", C::me_violation, "the watchdog retries after a failed renewal, but none reaches the server before the lease lapses; the holder is not told"},
    Row{"ext:redisson+failfast", "unavailable-release", C::liveness, "the refused unlock fails at once (no retries): answered error; the hash stays until its lease ends"},
    // Redisson's other locks (issue 27; docs/peers.md, "Redisson's other locks"): written from the source before the first run.
    // --- ext:redisson-fair ---
    Row{"ext:redisson-fair", "holder-crash", C::liveness, "the watchdog is a timer of the dead JVM: the hash is free after one lease"},
    Row{"ext:redisson-fair", "holder-pause", C::me_violation, "SIGSTOP freezes the JVM and its watchdog: the lease lapses"},
    Row{"ext:redisson-fair", "slow-holder", C::safe, "the live watchdog renews the lease every ttl/3"},
    Row{"ext:redisson-fair", "release-race", C::safe, "the unlock script checks the owner field atomically: the late EVALSHA deletes nothing"},
    Row{"ext:redisson-fair", "expire-gap", C::not_applicable, "the queue script takes the hash and PEXPIREs it in one script: no gap"},
    Row{"ext:redisson-fair", "clock-skew", C::safe, "the queue's timeouts are the clients' wall clocks, but exclusion is the hash's existence and its relative PEXPIRE: a skew reorders the queue at most"},
    Row{"ext:redisson-fair", "failover", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout (Config's defaults): blocked past wait_ms + 1 s; or a later attempt reaches the empty server while the holder works: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-fair", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redisson-fair", "node-restart", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout (Config's defaults): blocked past wait_ms + 1 s; or a later attempt reaches the empty server while the holder works: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-fair", "clock-jump", C::me_violation, "Redis expires the hash at once and a waiter takes it; or none does within the plan's window: a fair waiter re-queues at the tail with each 30 ms attempt and sleeps on its channel while another is the queue's head, and its tryLock ends without a last try, so waiters whose attempts overlap keep each other out", C::safe},
    Row{"ext:redisson-fair", "net-cut", C::me_violation, "the watchdog retries after a failed renewal, but none reaches the server before the lease lapses; the holder is not told"},
    Row{"ext:redisson-fair", "unavailable-release", C::liveness, "the refused unlock fails or waits out its timeout; the hash stays until its lease ends"},
    // --- ext:redisson-3.18.1-fair ---
    Row{"ext:redisson-3.18.1-fair", "holder-crash", C::liveness, "the watchdog is a timer of the dead JVM: the hash is free after one lease"},
    Row{"ext:redisson-3.18.1-fair", "holder-pause", C::me_violation, "SIGSTOP freezes the JVM and its watchdog: the lease lapses"},
    Row{"ext:redisson-3.18.1-fair", "slow-holder", C::safe, "the live watchdog renews the lease every ttl/3"},
    Row{"ext:redisson-3.18.1-fair", "release-race", C::safe, "the unlock script checks the owner field atomically: the late EVAL deletes nothing"},
    Row{"ext:redisson-3.18.1-fair", "expire-gap", C::not_applicable, "the queue script takes the hash and PEXPIREs it in one script: no gap"},
    Row{"ext:redisson-3.18.1-fair", "clock-skew", C::safe, "the queue's timeouts are the clients' wall clocks, but exclusion is the hash's existence and its relative PEXPIRE: a skew reorders the queue at most"},
    Row{"ext:redisson-3.18.1-fair", "failover", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout and retries (Config's defaults): blocked past wait_ms + 1 s; or a retry, 1.5 s later (retryInterval, no jitter in this version), reaches the promoted, empty replica while the holder works: a second holder (seen since the parked holder waits 2 s, past the retry)", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-3.18.1-fair", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redisson-3.18.1-fair", "node-restart", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout and retries (Config's defaults): blocked past wait_ms + 1 s; or a waiter asleep on the queue's channel sends its next attempt to the restarted, empty server: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-3.18.1-fair", "clock-jump", C::me_violation, "Redis expires the hash at once and a waiter takes it; or none does within the plan's window: a fair waiter re-queues at the tail with each 30 ms attempt and sleeps on its channel while another is the queue's head, and its tryLock ends without a last try, so waiters whose attempts overlap keep each other out", C::safe},
    Row{"ext:redisson-3.18.1-fair", "net-cut", C::me_violation, "a failed renewal stops the watchdog for good; the holder is not told"},
    Row{"ext:redisson-3.18.1-fair", "unavailable-release", C::liveness, "the refused unlock retries 3 times 1.5 s apart (Config's defaults): it blocks past the kit's 1.5 s answer bound"},
    // --- ext:redisson-fenced ---
    Row{"ext:redisson-fenced", "holder-crash", C::liveness, "the watchdog is a timer of the dead JVM: the hash is free after one lease"},
    Row{"ext:redisson-fenced", "holder-pause", C::safe, "the lease lapses under the stopped JVM, but the next holder's token is larger: the resource refuses the stale one"},
    Row{"ext:redisson-fenced", "slow-holder", C::safe, "the live watchdog renews the lease every ttl/3"},
    Row{"ext:redisson-fenced", "release-race", C::safe, "the unlock script checks the owner field atomically: the late EVALSHA deletes nothing"},
    Row{"ext:redisson-fenced", "expire-gap", C::not_applicable, "INCR of the token, HINCRBY and PEXPIRE run in one script: no gap"},
    Row{"ext:redisson-fenced", "clock-skew", C::safe, "relative PEXPIRE; the wait subtracts two readings of one local clock"},
    Row{"ext:redisson-fenced", "failover", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout (Config's defaults): blocked past wait_ms + 1 s; or a later attempt reaches the empty server while the holder works: a second holder, whose token the lost counter repeats: the fence cannot part them", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-fenced", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redisson-fenced", "node-restart", C::safe, "the token counter restarts empty with the node: the new holder draws token 1, below the old holder's (the probe drew one before it), and the resource refuses it; or a waiter's acquire sent to the dead node waits out its 3 s timeout: blocked past wait_ms + 1 s; or a later newcomer inside the old holder's section draws the old holder's token again and is admitted beside it: a second holder", C::liveness, false, false, C::me_violation},
    Row{"ext:redisson-fenced", "clock-jump", C::safe, "Redis expires the hash at once, but the token counter survives: the next holder's token is larger and the resource refuses the old one's"},
    Row{"ext:redisson-fenced", "net-cut", C::safe, "the lease lapses under the cut-off holder, but its stale token is refused at the resource"},
    Row{"ext:redisson-fenced", "unavailable-release", C::liveness, "the refused unlock fails or waits out its timeout; the hash stays until its lease ends"},
    // --- ext:redisson-spin ---
    Row{"ext:redisson-spin", "holder-crash", C::liveness, "the watchdog is a timer of the dead JVM: the hash is free after one lease"},
    Row{"ext:redisson-spin", "holder-pause", C::me_violation, "SIGSTOP freezes the JVM and its watchdog: the lease lapses"},
    Row{"ext:redisson-spin", "slow-holder", C::safe, "the live watchdog renews the lease every ttl/3"},
    Row{"ext:redisson-spin", "release-race", C::safe, "the unlock script checks the owner field atomically: the late EVALSHA deletes nothing"},
    Row{"ext:redisson-spin", "expire-gap", C::not_applicable, "HINCRBY and PEXPIRE run in one script: no gap"},
    Row{"ext:redisson-spin", "clock-skew", C::safe, "relative PEXPIRE; the back-off and the wait read one local clock"},
    Row{"ext:redisson-spin", "failover", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout (Config's defaults): blocked past wait_ms + 1 s; or a later attempt reaches the empty server while the holder works: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-spin", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redisson-spin", "node-restart", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout (Config's defaults): blocked past wait_ms + 1 s; or a later attempt reaches the empty server while the holder works: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-spin", "clock-jump", C::me_violation, "Redis expires the hash at once; the watchdog renews only an existing field"},
    Row{"ext:redisson-spin", "net-cut", C::me_violation, "the watchdog retries after a failed renewal, but none reaches the server before the lease lapses; the holder is not told"},
    Row{"ext:redisson-spin", "unavailable-release", C::liveness, "the refused unlock fails or waits out its timeout; the hash stays until its lease ends"},
    // --- ext:redisson-3.18.1-spin ---
    Row{"ext:redisson-3.18.1-spin", "holder-crash", C::liveness, "the watchdog is a timer of the dead JVM: the hash is free after one lease"},
    Row{"ext:redisson-3.18.1-spin", "holder-pause", C::me_violation, "SIGSTOP freezes the JVM and its watchdog: the lease lapses"},
    Row{"ext:redisson-3.18.1-spin", "slow-holder", C::safe, "the live watchdog renews the lease every ttl/3"},
    Row{"ext:redisson-3.18.1-spin", "release-race", C::safe, "the unlock script checks the owner field atomically: the late EVAL deletes nothing"},
    Row{"ext:redisson-3.18.1-spin", "expire-gap", C::not_applicable, "HINCRBY and PEXPIRE run in one script: no gap"},
    Row{"ext:redisson-3.18.1-spin", "clock-skew", C::safe, "relative PEXPIRE; the back-off and the wait read one local clock"},
    Row{"ext:redisson-3.18.1-spin", "failover", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout and retries (Config's defaults): blocked past wait_ms + 1 s; or a retry, 1.5 s later (retryInterval, no jitter in this version), reaches the promoted, empty replica while the holder works: a second holder (seen since the parked holder waits 2 s, past the retry)", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-3.18.1-spin", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:redisson-3.18.1-spin", "node-restart", C::liveness, "a waiter's acquire sent to the dead node waits out its 3 s timeout and retries (Config's defaults): blocked past wait_ms + 1 s; or a retry, 1.5 s later (retryInterval, no jitter in this version), reaches the restarted, empty server while the holder works: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-3.18.1-spin", "clock-jump", C::me_violation, "Redis expires the hash at once; the watchdog renews only an existing field"},
    Row{"ext:redisson-3.18.1-spin", "net-cut", C::me_violation, "a failed renewal stops the watchdog for good; the holder is not told"},
    Row{"ext:redisson-3.18.1-spin", "unavailable-release", C::liveness, "the refused unlock retries 3 times 1.5 s apart (Config's defaults): it blocks past the kit's 1.5 s answer bound"},
    // --- ext:redisson-redlock (getRedLock over 5 masters, one client each) ---
    Row{"ext:redisson-redlock", "holder-crash", C::liveness, "every watchdog is a timer of the dead JVM: the hashes expire on every node after one lease"},
    Row{"ext:redisson-redlock", "holder-pause", C::me_violation, "SIGSTOP freezes every watchdog; RedLock checks no validity: the leases lapse"},
    Row{"ext:redisson-redlock", "slow-holder", C::safe, "each lock's live watchdog renews its hash every ttl/3; but RedLock tries the locks one after another and checks its wait only between them, unlocking every vote of a failed round first: under load a waiter's tryLock overran wait_ms + 1 s (blocked)", C::liveness},
    Row{"ext:redisson-redlock", "release-race", C::safe, "each node's unlock script checks the owner field atomically: the late EVALSHA deletes nothing"},
    Row{"ext:redisson-redlock", "expire-gap", C::not_applicable, "HINCRBY and PEXPIRE run in one script on each node: no gap"},
    Row{"ext:redisson-redlock", "clock-skew", C::safe, "relative PEXPIRE; the wait subtracts two readings of one local clock"},
    Row{"ext:redisson-redlock", "failover", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    Row{"ext:redisson-redlock", "node-minority", C::liveness, "the locks are tried one after another, and a dead node's script waits out its 3 s timeout: blocked past wait_ms + 1 s"},
    Row{"ext:redisson-redlock", "node-restart", C::liveness, "a waiter's script sent to a dead node waits out its 3 s timeout: blocked past wait_ms + 1 s; or its later attempt wins a majority with the nodes that came back empty: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-redlock", "clock-jump", C::me_violation, "the jumped node is one of the holder's bare majority: a contender wins it with the two free nodes; or, within the matrix's 30 ms wait, each attempt spends its budget on the held nodes one after another (a subscribe and wait each) and never reaches the free ones: nobody else gets in", C::safe, /*exposed=*/true},
    Row{"ext:redisson-redlock", "net-cut", C::me_violation, "no watchdog renewal reaches a node: the hashes expire on every node; the holder is not told"},
    Row{"ext:redisson-redlock", "unavailable-release", C::liveness, "the refused unlocks leave the hashes until their lease ends (RedLock's unlock skips every failure)"},
    // --- ext:redisson-3.18.1-redlock (getRedLock over 5 masters, one client each) ---
    Row{"ext:redisson-3.18.1-redlock", "holder-crash", C::liveness, "every watchdog is a timer of the dead JVM: the hashes expire on every node after one lease"},
    Row{"ext:redisson-3.18.1-redlock", "holder-pause", C::me_violation, "SIGSTOP freezes every watchdog; RedLock checks no validity: the leases lapse"},
    Row{"ext:redisson-3.18.1-redlock", "slow-holder", C::safe, "each lock's live watchdog renews its hash every ttl/3; but RedLock tries the locks one after another and checks its wait only between them, unlocking every vote of a failed round first: under load a waiter's tryLock overran wait_ms + 1 s (blocked)", C::liveness},
    Row{"ext:redisson-3.18.1-redlock", "release-race", C::safe, "each node's unlock script checks the owner field atomically: the late EVAL deletes nothing"},
    Row{"ext:redisson-3.18.1-redlock", "expire-gap", C::not_applicable, "HINCRBY and PEXPIRE run in one script on each node: no gap"},
    Row{"ext:redisson-3.18.1-redlock", "clock-skew", C::safe, "relative PEXPIRE; the wait subtracts two readings of one local clock"},
    Row{"ext:redisson-3.18.1-redlock", "failover", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    Row{"ext:redisson-3.18.1-redlock", "node-minority", C::liveness, "the locks are tried one after another, and a dead node's script waits out its 3 s timeout: blocked past wait_ms + 1 s (and retried)"},
    Row{"ext:redisson-3.18.1-redlock", "node-restart", C::liveness, "a waiter's script sent to a dead node waits out its 3 s timeout: blocked past wait_ms + 1 s; or its later attempt wins a majority with the nodes that came back empty: a second holder", C::me_violation, /*exposed=*/true},
    Row{"ext:redisson-3.18.1-redlock", "clock-jump", C::me_violation, "the jumped node is one of the holder's bare majority: a contender wins it with the two free nodes; or, within the matrix's 30 ms wait, each attempt spends its budget on the held nodes one after another (a subscribe and wait each) and never reaches the free ones: nobody else gets in", C::safe, /*exposed=*/true},
    Row{"ext:redisson-3.18.1-redlock", "net-cut", C::me_violation, "no watchdog renewal reaches a node: the hashes expire on every node; the holder is not told"},
    Row{"ext:redisson-3.18.1-redlock", "unavailable-release", C::liveness, "the refused unlocks leave the hashes until their lease ends (RedLock's unlock skips every failure)"},
};

// The Spring Integration RedisLockRegistry row (docs/peers.md, "Spring Integration RedisLockRegistry"):
// a table of its own, so that the Redisson rows above change without touching it.
constexpr std::array kSpringPeerCells = {
    // --- ext:spring-redis-lock-registry (7.1.2, SPIN_LOCK, expireAfter = the run's ttl) ---
    Row{"ext:spring-redis-lock-registry", "holder-crash", C::liveness, "the obtain script sets the key with PX: the dead holder's key expires after one lease"},
    Row{"ext:spring-redis-lock-registry", "holder-pause", C::me_violation, "nothing renews the lease (no renewal scheduler by default): it lapses under the stopped holder"},
    Row{"ext:spring-redis-lock-registry", "slow-holder", C::me_violation, "nothing renews the lease (no renewal scheduler by default): it lapses while the holder still works"},
    Row{"ext:spring-redis-lock-registry", "release-race", C::safe, "unlock is one compare-and-delete script: the late call deletes nothing, and unlock() throws"},
    Row{"ext:spring-redis-lock-registry", "expire-gap", C::not_applicable, "the obtain script sets the key with its PX in one command: no gap"},
    Row{"ext:spring-redis-lock-registry", "clock-skew", C::safe, "PX is relative; the spin's wait compares two readings of one local clock"},
    Row{"ext:spring-redis-lock-registry", "failover", C::me_violation, "the promoted replica never saw the key; Lettuce reconnects at once and replays the waiters' obtain scripts: a second holder"},
    Row{"ext:spring-redis-lock-registry", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:spring-redis-lock-registry", "node-restart", C::me_violation, "the only copy of the key vanished; Lettuce reconnects within its 1, 2, 4 ms backoff and a waiter's obtain script takes the empty server"},
    Row{"ext:spring-redis-lock-registry", "clock-jump", C::me_violation, "Redis expires the key by its wall clock: it is gone at once, and nothing renews it"},
    Row{"ext:spring-redis-lock-registry", "net-cut", C::me_violation, "the lease lapses while the cut-off holder still works: nothing renews it"},
    Row{"ext:spring-redis-lock-registry", "unavailable-release", C::liveness, "the reset fails the compare-and-delete in flight at once (Lettuce completes it with the I/O error): unlock() throws, answered error; the key stays until its TTL"},
};

// The Rust rows (docs/peers.md, "The Rust rows"): written from the crates' source before the
// first run, a table of their own so that the other rows change without touching them.
constexpr std::array kRustPeerCells = {
    // --- ext:rslock (rslock 0.10.0, a Redlock over the five masters) ---
    Row{"ext:rslock", "holder-crash", C::liveness, "SET NX PX on every node: the dead holder's keys expire after one ttl"},
    Row{"ext:rslock", "holder-pause", C::me_violation, "validity is computed once, at acquire: a pause later is unseen"},
    Row{"ext:rslock", "slow-holder", C::me_violation, "extend() is the caller's (the README calls it by hand): the validity runs out while the holder still works"},
    Row{"ext:rslock", "release-race", C::safe, "unlock is a compare-and-delete script on every node: the late EVALSHA deletes nothing"},
    Row{"ext:rslock", "expire-gap", C::not_applicable, "SET NX PX on each node is one command: no gap"},
    Row{"ext:rslock", "clock-skew", C::safe, "validity subtracts two Instant readings (CLOCK_MONOTONIC, which the shim leaves alone); the servers count the TTL"},
    Row{"ext:rslock", "failover", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    Row{"ext:rslock", "node-minority", C::safe, "3 of 5 nodes still form a quorum: a dead node's refused connection is a lost vote, not an error"},
    Row{"ext:rslock", "node-restart", C::me_violation, "3 of the holder's nodes come back empty: a contender gets a quorum"},
    Row{"ext:rslock", "clock-jump", C::me_violation, "the jumped node is one of the holder's bare majority: a contender wins it with the two free nodes"},
    Row{"ext:rslock", "net-cut", C::me_violation, "the keys expire on every node; the holder is not told"},
    Row{"ext:rslock", "unavailable-release", C::liveness, "unlock swallows the refused scripts and returns nothing: the keys stay until their TTL"},
    // --- ext:redlock-rs (redlock-rs 2.0.0, blocking, a Redlock over the five masters) ---
    Row{"ext:redlock-rs", "holder-crash", C::liveness, "SET NX PX on every node: the dead holder's keys expire after one ttl"},
    Row{"ext:redlock-rs", "holder-pause", C::me_violation, "validity is computed once, at acquire: a pause later is unseen"},
    Row{"ext:redlock-rs", "slow-holder", C::me_violation, "no extend at all: the validity runs out while the holder still works"},
    Row{"ext:redlock-rs", "release-race", C::safe, "unlock is a compare-and-delete script on every node: the late EVALSHA deletes nothing"},
    Row{"ext:redlock-rs", "expire-gap", C::not_applicable, "SET NX PX on each node is one command: no gap"},
    Row{"ext:redlock-rs", "clock-skew", C::safe, "validity subtracts two Instant readings (CLOCK_MONOTONIC, which the shim leaves alone); the servers count the TTL"},
    Row{"ext:redlock-rs", "failover", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    Row{"ext:redlock-rs", "node-minority", C::liveness, "the first node that refuses a connection ends lock() with Err (the `?`, redlock.rs:145): every acquire is refused while two of five nodes are down, though three could vote: the lock is unavailable"},
    Row{"ext:redlock-rs", "node-restart", C::liveness, "a contender's SETs made before a node still restarting refused it stay (the `?` skips the cleanup): stranded votes keep every contender from a quorum until the holder leaves", std::nullopt, /*exposed=*/true},
    Row{"ext:redlock-rs", "clock-jump", C::me_violation, "the jumped node is one of the holder's bare majority: a contender wins it with the two free nodes"},
    Row{"ext:redlock-rs", "net-cut", C::me_violation, "the keys expire on every node; the holder is not told"},
    Row{"ext:redlock-rs", "unavailable-release", C::liveness, "unlock swallows the refused connections and returns nothing: the keys stay until their TTL"},
};

// The Python venv rows (docs/peers.md, "The Python rows"): python-redis-lock 4.0.1 (redis_lock/__init__.py)
// and pottery 3.0.1 (pottery/redlock.py), on redis-py 8.2.0, read before the first run.
constexpr std::array kPythonPeerCells = {
    // --- ext:python-redis-lock (auto_renewal=True, its README's call; a 1 s lease: whole seconds) ---
    Row{"ext:python-redis-lock", "holder-crash", C::liveness, "the renewal thread dies with the process: the key expires after its 1 s lease (SET NX EX, :232), and no release signal wakes the waiters' BLPOP (:237)"},
    Row{"ext:python-redis-lock", "holder-pause", C::me_violation, "SIGSTOP freezes the renewal thread too (:278-284): the lease lapses"},
    Row{"ext:python-redis-lock", "slow-holder", C::safe, "the live renewal thread re-sets the expiry every expire x 2/3 (:168, :284) while the holder works"},
    Row{"ext:python-redis-lock", "release-race", C::safe, "release stops the renewal thread (:347), then one compare-and-delete script (:20-30): the late EVALSHA deletes nothing"},
    Row{"ext:python-redis-lock", "expire-gap", C::not_applicable, "SET NX EX is one command: no gap"},
    Row{"ext:python-redis-lock", "clock-skew", C::safe, "the server counts the TTL; the renewal interval is a threading.Event wait (monotonic): no wall clock is read"},
    Row{"ext:python-redis-lock", "failover", C::me_violation, "the promoted replica never saw the key: a second holder; the renewal's script finds no key (:34), raises NotAcquired in its thread, which ends telling nobody"},
    Row{"ext:python-redis-lock", "node-minority", C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"},
    Row{"ext:python-redis-lock", "node-restart", C::me_violation, "the only copy of the key vanished: a contender's next SET NX gets it while the holder works; the renewal thread then dies on NotAcquired. A contender asleep in BLPOP (its 30 ms wait is a whole second to the library, :220-237) is woken by no release and re-sent into the same BLPOP by redis-py's retry: if all sleep through the holder's section, it is blocked past its bound (1 of 8 runs, under load): no schedule of the column fixes which", C::liveness, /*exposed=*/true},
    Row{"ext:python-redis-lock", "clock-jump", C::me_violation, "Redis expires the key at once; the renewal script extends only a key that still holds our id (:34)"},
    Row{"ext:python-redis-lock", "net-cut", C::me_violation, "the renewal's script cannot reach the server (redis-py 8 retries 10 times, up to 1 s apart): the thread dies, the lease lapses while the holder works"},
    Row{"ext:python-redis-lock", "unavailable-release", C::liveness, "release stopped the renewal, then the refused unlock is retried 10 times up to 1 s apart (redis/_defaults.py): it blocks past the kit's 1.5 s bound; the key stays until its lease ends"},
    // --- ext:pottery-redlock (a Redlock over the 5 masters, its README's call) ---
    Row{"ext:pottery-redlock", "holder-crash", C::liveness, "the keys expire on every node after one ttl"},
    Row{"ext:pottery-redlock", "holder-pause", C::me_violation, "validity is checked once, at acquire (:343-349): a pause later is unseen"},
    Row{"ext:pottery-redlock", "slow-holder", C::me_violation, "extend() is manual (:503): the validity runs out while the holder still works"},
    Row{"ext:pottery-redlock", "release-race", C::safe, "release is a compare-and-delete script on every master (:136-150)"},
    Row{"ext:pottery-redlock", "expire-gap", C::not_applicable, "SET NX PX on each master is one command (:278-285): no gap"},
    Row{"ext:pottery-redlock", "clock-skew", C::safe, "the validity subtracts two perf_counter readings (timer.py); the leases are relative PX"},
    Row{"ext:pottery-redlock", "failover", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    Row{"ext:pottery-redlock", "node-minority", C::liveness, "an attempt that reaches no majority waits for every master (as_completed, :332), and redis-py 8 retries a refused connection 10 times up to 1 s apart (about 4 s), then undoes its votes the same way (:350): a contender's acquire blocks past its wait bound"},
    Row{"ext:pottery-redlock", "node-restart", C::me_violation, "3 of the holder's masters come back empty: a contender gets a majority"},
    Row{"ext:pottery-redlock", "clock-jump", C::me_violation, "the jumped master is one of the holder's bare majority: a contender wins it with the two free masters"},
    Row{"ext:pottery-redlock", "net-cut", C::me_violation, "the keys expire on every master; the holder is not told"},
    Row{"ext:pottery-redlock", "unavailable-release", C::liveness, "each refused release script is retried 10 times up to 1 s apart (redis/_defaults.py): release blocks past the kit's 1.5 s bound; the keys stay until their TTL"},
};

// The row written down for this cell in `table`, if any.
std::optional<Expectation> find_row(std::span<const Row> table, std::string_view lock, std::string_view fault) {
  for (const auto& row : table)
    if (row.lock == lock && row.fault == fault) {
      std::vector<CellClass> also;
      for (const auto& other : {row.or_else, row.or_else_too})
        if (other) also.push_back(*other);
      return Expectation{row.expected, std::string(row.reason), also, row.exposed, row.exposed_either};
    }
  return std::nullopt;
}

// A column's written cell as an expectation.
Expectation expectation_of(const GenerationCell& cell) {
  std::vector<CellClass> also;
  if (cell.or_else) also.push_back(*cell.or_else);
  return Expectation{cell.expected, std::string(cell.reason), also, cell.exposed, cell.exposed_either};
}

}  // namespace

std::optional<Expectation> expected_cell(std::string_view lock, std::string_view fault) {
  return expected_cell(lock, fault, matrix_columns());
}

std::optional<Expectation> expected_cell(std::string_view lock, std::string_view fault,
                                        std::span<const MatrixColumn> table) {
  const MatrixColumn* column = find_matrix_column(fault, table);
  // Capabilities decide the cells that make no sense, for every generation alike.
  if (const auto described = find_lock(lock)) {
    if (!described->capabilities.uses_redis)
      return Expectation{C::not_applicable, "no Redis lock to fault; it violates with no fault at all (see the comparison)", {}};
    if (column != nullptr && column->rule != nullptr)
      if (auto ruled = column->rule(*described)) return expectation_of(*ruled);
  }
  if (column != nullptr)
    for (const auto& cell : column->generations)
      if (cell.generation == lock) return expectation_of(cell);
  if (auto peer_cell = find_row(kPeerCells, lock, fault)) return peer_cell;
  if (auto java_cell = find_row(kJavaPeerCells, lock, fault)) return java_cell;
  if (auto spring_cell = find_row(kSpringPeerCells, lock, fault)) return spring_cell;
  if (auto rust_cell = find_row(kRustPeerCells, lock, fault)) return rust_cell;
  if (auto python_cell = find_row(kPythonPeerCells, lock, fault)) return python_cell;
  // A variant row (ext:BASE+VARIANT, docs/peers.md "Defaults and variants") lists only the cells
  // its departure changes; the others are its base row's.
  if (const auto plus = lock.find('+'); lock.starts_with(kAdapterPrefix) && plus != std::string_view::npos) {
    if (auto base_cell = find_row(kPeerCells, lock.substr(0, plus), fault)) return base_cell;
    return find_row(kJavaPeerCells, lock.substr(0, plus), fault);
  }
  return std::nullopt;
}

std::string expected_text(const Expectation& expectation) {
  std::string text = class_name(expectation.expected);
  for (CellClass also : expectation.or_else) text += std::string(" or ") + class_name(also);
  if (expectation.exposed_either) text += ", exposed or not";
  else if (expectation.exposed) text += ", exposed";
  return text;
}

}  // namespace locklab::harness
