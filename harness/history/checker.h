// The checker (Jepsen's "checker"): judges a recorded history after the run.
// It never asks the lock for its opinion; it reads what the clients recorded
// (critical-section intervals on one shared monotonic clock) and what the
// protected counter shows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "history/history.h"

namespace locklab::harness {

struct OverlapSummary {
  std::int64_t pairs = 0;           // pairs of critical sections of different clients that intersect
  int max_concurrent = 0;           // most clients inside at one instant
  std::int64_t overlap_ns = 0;      // total time with two or more clients inside
  std::int64_t first_overlap_ns = -1;  // enter time of the first intersecting section (-1: none)
};

// Intervals are half-open [enter, exit): one section ending exactly when the
// next begins is a handoff, not an overlap.
OverlapSummary find_overlaps(const std::vector<CsRecord>& by_enter);

// Releases that deleted another client's lock. X's release returned
// `released`, yet another client Y entered after X entered and before X
// invoked release. While X's key existed Y could not have acquired, so X's key
// had vanished (expired) and what X deleted was Y's.
std::int64_t count_wrong_owner_releases(const std::vector<CsRecord>& by_enter);

// When each client was trying to get the lock, for the stall check.
struct ClientSpan {
  std::int64_t started_ns = 0;
  std::int64_t finished_ns = 0;
  std::int64_t died_ns = 0;  // the coordinator saw it die (0: it did not, or not yet when the run ended)
};

struct Span {
  std::int64_t from_ns = 0;
  std::int64_t to_ns = 0;
};
using Stall = Span;

// The stretches of time with two or more clients inside (for the timeline picture).
std::vector<Span> overlap_spans(const std::vector<CsRecord>& by_enter);

// Stretches longer than `threshold_ns` in which nobody was inside a critical
// section although some client was still running (so: waiting). Measured from
// run start to the last client's finish. A deadlock shows up as one long stall.
std::vector<Stall> find_stalls(const std::vector<CsRecord>& by_enter, const std::vector<ClientSpan>& clients,
                               std::int64_t run_start_ns, std::int64_t threshold_ns);

// Lost updates: increments the clients were told succeeded minus what the
// counter grew by. Never negative (a write whose reply was lost may have
// landed; those are counted apart as unconfirmed).
std::int64_t lost_updates(std::int64_t confirmed_increments, std::int64_t counter_growth);

// Sections whose write may or may not have landed: the counter command failed,
// or the client died while its SET was on the way.
std::int64_t unconfirmed_writes(const std::vector<CsRecord>& records);

// What the lock left behind on its servers after every client finished.
struct KeysLeft {
  int keys = 0;          // servers still holding the lock key
  int without_ttl = 0;   // ... with no expiry (PTTL -1): nothing will ever free it
  bool looked = true;    // false: the lock's key is unknown (an adapter that named none): not looked for
};

struct SafetyInput {
  std::vector<CsRecord> records;  // sorted by enter_ns
  std::vector<ClientSpan> clients;
  std::int64_t run_start_ns = 0;
  std::int64_t stall_threshold_ns = 0;
  std::int64_t confirmed_increments = 0;
  std::int64_t counter_growth = 0;
  bool lock_has_keys = true;  // false for no-lock / local-mutex: nothing in Redis to delete
  // The release deletes only its own key (compare-and-delete): a `released` by
  // X after Y entered cannot have deleted Y's key (see released_after_loss).
  bool owner_checked_release = false;
  KeysLeft keys_left;
  std::int64_t stale_writes_rejected = 0;
  int live_max_occupancy = 0;  // the shared occupancy counter's high-water mark
  // Per client (by index, as `clients`): an acquire of its timed out, or it
  // stopped while still waiting. Empty: not known (no deadlock evidence).
  std::vector<bool> kept_out;
  // The lock has a lease (Capabilities::expires): a key it leaves without a
  // Redis TTL (getset-timestamp's) is still taken over once its time passed,
  // so a dead owner's key is no deadlock evidence.
  bool lock_expires = false;
};

// A deadlock shown by its evidence rather than by a stall over the threshold
// (a run shorter than 3 x ttl never has one): a lock without a lease left a
// key with no expiry, the last section to begin never ended and its client was
// seen dead (died inside: the key's owner is dead -- a client merely stopped
// inside as the run ended is no dead owner), nobody entered after it, and
// another client still running after that death was kept out (a timeout, or
// a wait still open at its end).
struct DeadOwner {
  int client = -1;            // the dead owner; -1: no such evidence
  std::int64_t since_ns = 0;  // its section began
  int kept_out = 0;           // other clients kept out after it
};
DeadOwner find_dead_owner(const SafetyInput& input);

// The one rule for two overlapping critical sections, written once: the
// single-host checker applies it to the recorded history (monotonic ns), and
// the multi-host oracle to the order the oracle Redis saw (its own sequence
// numbers, no synchronised clocks). Both call this function.
//
// What one section did at the protected resource. `read_start` is just before
// its read was sent, `write_end` just after its write's reply came back; both
// in one order-preserving unit. A section whose write never completed
// (failed, pending, died) has write_end = kOpenEnded: its window never closed.
struct ResourceAccess {
  static constexpr std::int64_t kOpenEnded = INT64_MAX;
  bool refused = false;        // the fenced resource refused its token: it changed nothing
  bool has_token = false;
  std::uint64_t token = 0;
  std::int64_t read_start = 0;
  std::int64_t write_end = kOpenEnded;
};

enum class OverlapKind {
  violation,            // two holders whose accesses could interleave
  fenced_off,           // one of the two was refused by the resource: it changed nothing
  serialized_by_fence,  // both accepted, one's read-to-write window ended before the other's
                        // began, and the resource saw their tokens strictly rising in that order
};

// Two sections of different clients whose lease intervals intersect. Equal
// tokens are never "serialized by the fence": the resource accepts a token
// equal to the highest it saw (a holder's own write after its own read), so it
// cannot tell two holders with one token apart -- their order was luck.
OverlapKind classify_overlap(const ResourceAccess& a, const ResourceAccess& b);

// What a recorded section did at the resource, as classify_overlap reads it:
// the one mapping from CsRecord to ResourceAccess. A section whose read was
// never stamped counts from its enter; one whose write did not complete
// (failed, pending, read failed, died) stays open-ended.
ResourceAccess resource_access(const CsRecord& section);

// Every intersecting pair of sections of different clients (half-open
// intervals), classed by classify_overlap.
struct ClassifiedOverlaps {
  std::int64_t violations = 0;
  std::int64_t fenced_off = 0;
  std::int64_t serialized_by_fence = 0;
  std::int64_t first_violation_ns = -1;  // the later enter of the earliest violating pair (-1: none)
  std::vector<CsRecord> violating;       // the sections in at least one violating pair, by enter
  int recorded_max_concurrent = 0;       // depth over all sections, whatever the pairs' kind
};
ClassifiedOverlaps classify_overlaps(const std::vector<CsRecord>& by_enter);

// The sections that take part in a violating pair (for the timeline picture).
std::vector<CsRecord> violating_sections(const std::vector<CsRecord>& by_enter);

// Leases lost under their holder (CsRecord::lease_lost), in sections with no
// fencing token -- a fenced section's lost lease is the resource's to judge,
// and it refuses a stale token by design.
struct LeasesLost {
  std::int64_t inside = 0;          // such sections
  std::int64_t nobody_entered = 0;  // ... that no other client entered before their release returned
};
LeasesLost leases_lost_inside(const std::vector<CsRecord>& by_enter);

struct Safety {
  // Violating pairs only: `pairs` counts them; max_concurrent, overlap_ns and
  // first_overlap_ns are computed over the sections that take part in one
  // (max_concurrent is 1 when no pair violates and some section was recorded).
  OverlapSummary overlaps;
  std::int64_t overlaps_fenced_off = 0;  // pairs in which the resource refused one section's token
  std::int64_t overlaps_serialized_by_fence = 0;  // pairs the resource accepted in token order, not interleaved
  // The live occupancy counter's high-water mark. Two or more is a violation
  // unless fence-excused pairs account for it (see check_safety).
  int live_max_holders = 0;
  bool live_holders_fenced_off = false;  // excused: fenced off or serialized by the fence
  LeasesLost leases_lost;
  // A lease was lost under a holder and nobody entered: if the verdict is
  // safe, it is safe by luck, not by design (docs/harness.md, "exposed").
  bool exposed = false;
  std::int64_t lost_updates = 0;
  std::int64_t unconfirmed_writes = 0;    // may have landed: growth up to this many above confirmed is exact
  std::int64_t unclaimed_increments = 0;  // counter growth beyond every recorded write: a writer the history lacks
  std::int64_t wrong_owner_releases = 0;
  // The same pattern for an owner-checked release: X's key had vanished and Y
  // entered, yet X's release said `released`. Its check kept it from deleting
  // Y's key, so no 误删: the library hid a lost lease (no verdict of its own;
  // the overlap with Y is what the verdict counts). Also counted: a `released`
  // for a section whose lease was lost (CsRecord::lease_lost, the run's
  // witness where it could tell) though nobody entered.
  std::int64_t released_after_loss = 0;
  std::vector<Stall> stalls;
  KeysLeft keys_left;
  std::int64_t stale_writes_rejected = 0;
  DeadOwner dead_owner;
};

Safety check_safety(const SafetyInput& input);

// The verdict: "safe", "violation" (overlaps, two or more live holders,
// lost updates, increments no recorded section made, wrong-owner releases),
// "deadlock" (a stall while a key without expiry blocks everyone, or a key
// without expiry whose owner died inside while others were kept out).
// "error" is decided by the caller (the run could not measure).
//
// The invariant (docs/harness.md, "What the oracle sees"): "safe" means no two
// recorded sections overlapped unless the fence kept them apart (one refused,
// or both accepted in token order without interleaving); the live counter's
// high-water mark was at most 1 -- or, only in a run with fence-excused
// overlaps and no violating one, at most the recorded depth over all sections; and the counter grew by exactly the
// confirmed increments (plus at most the unconfirmed writes, which may have
// landed).
struct Verdict {
  std::string verdict;
  std::vector<std::string> reasons;
  bool exposed = false;  // verdict "safe" and Safety::exposed (a caller that overrules the verdict clears it)
  // Verdict "error" for one reason only: no acquire succeeded, every attempt refused by the lock
  // (nothing else failed). Under a fault that acted and bit, that is the library's finding (the
  // matrix reads liveness: the lock was unavailable); without one, a broken lock (error).
  bool every_acquire_refused = false;
};
Verdict judge(const Safety& safety);

}  // namespace locklab::harness
