#include "sweeps/matrix_expectations.h"

#include <array>

#include "registry.h"
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
};

// Keep in step with docs/faults.md, "The matrix" (same cells, same reasons).
constexpr std::array kCells = {
    // --- 1: holder crash (SIGKILL inside the critical section) ---
    Row{"setnx", "holder-crash", C::deadlock, "no TTL: the dead holder's key stays forever"},
    Row{"setnx-expire", "holder-crash", C::liveness, "EXPIRE was set: the key frees itself after one ttl"},
    Row{"getset-timestamp", "holder-crash", C::liveness, "the next contender finds the timestamp past and GETSETs it"},
    Row{"set-nx-px-token", "holder-crash", C::liveness, "server TTL: unavailable for the rest of the lease"},
    Row{"lua-safe-delete", "holder-crash", C::liveness, "server TTL: unavailable for the rest of the lease"},
    Row{"reentrant-watchdog", "holder-crash", C::liveness, "the watchdog dies with the process: free after one lease"},
    Row{"redlock", "holder-crash", C::liveness, "the keys expire on every node after one ttl"},
    Row{"fenced", "holder-crash", C::liveness, "server TTL: unavailable for the rest of the lease"},
    Row{"fair-queue", "holder-crash", C::liveness, "the lease lapses, then the head of the queue gets the lock"},
    // --- 2: holder paused (SIGSTOP, watchdog included) until another client acquired ---
    Row{"setnx", "holder-pause", C::safe, "no TTL: the stopped holder keeps the lock; the others only time out"},
    Row{"setnx-expire", "holder-pause", C::me_violation, "the key expires under the stopped holder; it resumes inside next to the new one"},
    Row{"getset-timestamp", "holder-pause", C::me_violation, "the timestamp passes; a contender GETSETs it while the holder is stopped inside"},
    Row{"set-nx-px-token", "holder-pause", C::me_violation, "the lease lapses under the stopped holder (Kleppmann's pause)"},
    Row{"lua-safe-delete", "holder-pause", C::me_violation, "the lease lapses under the stopped holder; only fencing helps"},
    Row{"reentrant-watchdog", "holder-pause", C::me_violation, "SIGSTOP freezes the watchdog too: the lease lapses"},
    Row{"redlock", "holder-pause", C::me_violation, "validity is checked once, at acquire: a pause later is unseen"},
    Row{"fenced", "holder-pause", C::safe, "the lease lapses, but the resource refuses the stopped holder's stale token"},
    Row{"fair-queue", "holder-pause", C::me_violation, "the lease lapses; the queue hands the lock on while the holder is stopped"},
    // --- 3: slow critical section (longer than the ttl, process alive) ---
    Row{"setnx", "slow-holder", C::safe, "no TTL: a slow holder keeps the lock (and everyone waits)"},
    Row{"setnx-expire", "slow-holder", C::me_violation, "the key expires while the holder still works"},
    Row{"getset-timestamp", "slow-holder", C::me_violation, "the timestamp passes while the holder still works"},
    Row{"set-nx-px-token", "slow-holder", C::me_violation, "the lease lapses while the holder still works"},
    Row{"lua-safe-delete", "slow-holder", C::me_violation, "the lease lapses while the holder still works"},
    Row{"reentrant-watchdog", "slow-holder", C::safe, "the live watchdog renews the lease every ttl/3"},
    Row{"redlock", "slow-holder", C::me_violation, "the validity runs out; the workload does not extend it"},
    Row{"fenced", "slow-holder", C::safe, "the lease lapses, but the slow holder's stale token is refused"},
    Row{"fair-queue", "slow-holder", C::me_violation, "the lease lapses while the holder still works"},
    // --- 4: check-then-DEL race (stopped in the release window until expired and re-taken) ---
    Row{"setnx", "release-race", C::not_applicable, "no TTL: the key cannot expire in the release window"},
    Row{"setnx-expire", "release-race", C::me_violation, "blind DEL deletes the new holder's key; the next acquire overlaps it"},
    Row{"getset-timestamp", "release-race", C::me_violation, "blind DEL deletes the new holder's key; the next acquire overlaps it"},
    Row{"set-nx-px-token", "release-race", C::me_violation, "GET matched, the key expired, DEL deletes the new holder's key"},
    Row{"lua-safe-delete", "release-race", C::safe, "compare-and-delete is one script: the stale release deletes nothing"},
    Row{"reentrant-watchdog", "release-race", C::safe, "the unlock script checks the owner field atomically"},
    Row{"redlock", "release-race", C::safe, "compare-and-delete on every node"},
    Row{"fenced", "release-race", C::safe, "compare-and-delete is one script"},
    Row{"fair-queue", "release-race", C::safe, "the release script checks the holder's id atomically"},
    // --- 5: crash between SETNX and EXPIRE ---
    Row{"setnx", "expire-gap", C::not_applicable, "no EXPIRE at all (its crash is column holder-crash)"},
    Row{"setnx-expire", "expire-gap", C::deadlock, "the key was set, the EXPIRE never came: no TTL, nobody gets in"},
    Row{"getset-timestamp", "expire-gap", C::not_applicable, "one SETNX carries the expiry: no gap"},
    Row{"set-nx-px-token", "expire-gap", C::not_applicable, "SET NX PX is one command: no gap"},
    Row{"lua-safe-delete", "expire-gap", C::not_applicable, "SET NX PX is one command: no gap"},
    Row{"reentrant-watchdog", "expire-gap", C::not_applicable, "HINCRBY and PEXPIRE run in one script: no gap"},
    Row{"redlock", "expire-gap", C::not_applicable, "SET NX PX on each node: no gap"},
    Row{"fenced", "expire-gap", C::not_applicable, "SET NX PX is one command: no gap"},
    Row{"fair-queue", "expire-gap", C::not_applicable, "the acquire script sets the key with PX: no gap"},
    // --- 6: a contender's wall clock ahead by more than the ttl ---
    Row{"setnx", "clock-skew", C::safe, "no client timestamps"},
    Row{"setnx-expire", "clock-skew", C::safe, "the server counts the TTL"},
    Row{"getset-timestamp", "clock-skew", C::me_violation, "the skewed contender judges a live lock expired and GETSETs it"},
    Row{"set-nx-px-token", "clock-skew", C::safe, "the server counts the TTL"},
    Row{"lua-safe-delete", "clock-skew", C::safe, "the server counts the TTL"},
    Row{"reentrant-watchdog", "clock-skew", C::safe, "relative PEXPIRE; the watchdog uses monotonic time"},
    Row{"redlock", "clock-skew", C::safe, "validity uses the client's monotonic elapsed time only"},
    Row{"fenced", "clock-skew", C::safe, "the server counts the TTL"},
    Row{"fair-queue", "clock-skew", C::safe, "waiter deadlines use the server's clock"},
    // --- 7: master failover before the key reached the replica ---
    Row{"setnx", "failover", C::me_violation, "the promoted replica never saw the key: a second holder"},
    Row{"setnx-expire", "failover", C::me_violation, "the promoted replica never saw the key: a second holder"},
    Row{"getset-timestamp", "failover", C::me_violation, "the promoted replica never saw the key: a second holder"},
    Row{"set-nx-px-token", "failover", C::me_violation, "the promoted replica never saw the key: a second holder"},
    Row{"lua-safe-delete", "failover", C::me_violation, "asynchronous replication loses the key (no WAIT guard here)"},
    Row{"reentrant-watchdog", "failover", C::me_violation, "asynchronous replication loses the hash (no WAIT guard here)"},
    Row{"redlock", "failover", C::not_applicable, "independent masters, no replicas (a node that loses its key: node-restart)"},
    Row{"fenced", "failover", C::me_violation, "the token counter goes back with the lost key: two holders draw the same token", C::safe},
    Row{"fair-queue", "failover", C::me_violation, "the promoted replica never saw the key: a second holder"},
    // --- 8: Redlock minority crash (2 of 5 nodes down for the whole run) ---
    Row{"redlock", "node-minority", C::safe, "3 of 5 nodes still form a majority"},
    // --- 9: node restart without persistence (the holder's node(s) killed and restarted empty at once) ---
    Row{"setnx", "node-restart", C::me_violation, "the only copy of the key vanished: the next SETNX wins"},
    Row{"setnx-expire", "node-restart", C::me_violation, "the only copy of the key vanished"},
    Row{"getset-timestamp", "node-restart", C::me_violation, "the key vanished: the next SETNX wins at once"},
    Row{"set-nx-px-token", "node-restart", C::me_violation, "the only copy of the key vanished"},
    Row{"lua-safe-delete", "node-restart", C::me_violation, "the only copy of the key vanished"},
    Row{"reentrant-watchdog", "node-restart", C::me_violation, "the hash vanished; renewal finds no key and stops"},
    Row{"redlock", "node-restart", C::me_violation, "a majority of the holder's nodes come back empty: a contender gets a quorum"},
    Row{"fenced", "node-restart", C::me_violation, "the token counter restarts empty with the node: two holders can draw the same token", C::safe},
    Row{"fair-queue", "node-restart", C::me_violation, "the key and the queue vanished"},
    // --- 10: the lock node's wall clock jumps forward past the ttl while a holder is inside ---
    Row{"setnx", "clock-jump", C::safe, "no TTL: nothing to expire"},
    Row{"setnx-expire", "clock-jump", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    Row{"getset-timestamp", "clock-jump", C::safe, "expiry is judged by client clocks; the server's clock is not used"},
    Row{"set-nx-px-token", "clock-jump", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    Row{"lua-safe-delete", "clock-jump", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    Row{"reentrant-watchdog", "clock-jump", C::me_violation, "Redis expires the hash at once; the watchdog renews only an existing hash, and a polling waiter takes it"},
    Row{"redlock", "clock-jump", C::me_violation, "the jumped node is one of the holder's bare majority: a contender wins it with the two free nodes (K2)"},
    Row{"fenced", "clock-jump", C::safe, "the key expires early, but the resource refuses the old holder's token"},
    Row{"fair-queue", "clock-jump", C::me_violation, "Redis expires by its wall clock: the key is gone at once"},
    // --- 11a: the holder is cut off from the lock servers while it works past the ttl ---
    Row{"setnx", "net-cut", C::safe, "no TTL: the cut-off holder keeps the lock; the others only time out"},
    Row{"setnx-expire", "net-cut", C::me_violation, "the key expires while the cut-off holder still works"},
    Row{"getset-timestamp", "net-cut", C::me_violation, "the timestamp passes while the cut-off holder still works"},
    Row{"set-nx-px-token", "net-cut", C::me_violation, "the lease lapses while the cut-off holder still works"},
    Row{"lua-safe-delete", "net-cut", C::me_violation, "the lease lapses while the cut-off holder still works"},
    Row{"reentrant-watchdog", "net-cut", C::me_violation, "renewals cannot reach the server; the holder is not told"},
    Row{"redlock", "net-cut", C::me_violation, "the keys expire on every node; the holder is not told"},
    Row{"fenced", "net-cut", C::safe, "the lease lapses, the cut-off holder's stale token is refused"},
    Row{"fair-queue", "net-cut", C::me_violation, "the lease lapses while the cut-off holder still works"},
    // --- 12: Redis unavailable: the release is refused ---
    Row{"setnx", "unavailable-release", C::deadlock, "the DEL never arrives: a key without TTL"},
    Row{"setnx-expire", "unavailable-release", C::liveness, "the key stays until its TTL"},
    Row{"getset-timestamp", "unavailable-release", C::liveness, "the timestamp stays until it passes"},
    Row{"set-nx-px-token", "unavailable-release", C::liveness, "the key stays until its TTL"},
    Row{"lua-safe-delete", "unavailable-release", C::liveness, "the key stays until its TTL"},
    Row{"reentrant-watchdog", "unavailable-release", C::liveness, "the hash stays until its lease ends, unless its owner re-enters first (reentrant)", C::safe},
    Row{"redlock", "unavailable-release", C::liveness, "the keys stay until their TTL"},
    Row{"fenced", "unavailable-release", C::liveness, "the key stays until its TTL"},
    Row{"fair-queue", "unavailable-release", C::liveness, "the key stays until its TTL"},
};

}  // namespace

std::optional<Expectation> expected_cell(std::string_view lock, std::string_view fault) {
  // Capabilities decide the cells that make no sense, for every generation alike.
  if (const auto described = find_lock(lock)) {
    if (!described->capabilities.uses_redis)
      return Expectation{C::not_applicable, "no Redis lock to fault; it violates with no fault at all (see the comparison)"};
    if (fault == "node-minority" && !described->capabilities.multi_node)
      return Expectation{C::not_applicable, "one node: losing it is columns node-restart and unavailable-release"};
  }
  for (const auto& row : kCells)
    if (row.lock == lock && row.fault == fault) return Expectation{row.expected, std::string(row.reason), row.or_else, row.exposed};
  return std::nullopt;
}

std::string expected_text(const Expectation& expectation) {
  std::string text = class_name(expectation.expected);
  if (expectation.or_else) text += std::string(" or ") + class_name(*expectation.or_else);
  if (expectation.exposed) text += ", exposed";
  return text;
}

}  // namespace locklab::harness
