// The recorded history of a run: what every client did, with monotonic
// timestamps, in memory that all client processes share.
//
// The region is mmap(MAP_SHARED|MAP_ANONYMOUS)ed by the coordinator BEFORE it
// forks the clients, so every child writes into the same pages and the
// coordinator reads them after the children exit. All processes on one machine
// share CLOCK_MONOTONIC (std::chrono::steady_clock), so real-time order across
// clients is exact: the checker needs nothing else (Jepsen's history, without
// the cross-host clock error).
//
// Only the owning client writes its slot and its records; the header's
// atomics are the only state several clients touch at once.
//
// A critical section is on record from the moment it is entered: the client
// appends an open record first and fills it in place as it goes (write
// outcome, exit, release). A client that dies half way leaves its record
// behind, so the overlap it had and the write it made stay visible.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace locklab::harness {

std::int64_t monotonic_ns();  // steady_clock, the clock of every timestamp here

// How the critical section's counter write ended.
enum class CsWrite : std::uint8_t {
  written = 0,   // GET + SET both succeeded: one increment the counter must show
  refused = 1,   // fenced resource refused our token (stale holder): no increment
  failed = 2,    // a counter command failed: the increment may or may not be there
  none = 3,      // not attempted yet (the client died before its SET was sent)
  pending = 4,   // the SET was being sent when the client died: it may have landed
  read_failed = 5,  // the counter read failed: no SET was sent, so no increment is possible
};

// How far a client got through a recorded section.
enum class CsStage : std::uint8_t {
  inside = 0,  // entered, never left: the client died (or stopped) inside
  left = 1,    // left the section (exit_ns is real); release() never returned
  closed = 2,  // release() returned: every field is what the client saw
};

// `release` of a record whose release() never returned.
inline constexpr std::uint8_t kNoReleaseOutcome = 0xff;

// One critical section, as its client saw it.
struct CsRecord {
  std::int64_t want_ns = 0;      // the client began trying (first attempt of this wait)
  std::int64_t invoke_ns = 0;    // the try_acquire() that succeeded was called
  std::int64_t enter_ns = 0;     // ... and returned acquired: the client is inside
  std::int64_t exit_ns = 0;      // the counter work is done, release() is about to be called
                                 // (stage inside: filled in by records() -- see there)
  std::int64_t released_ns = 0;  // release() returned (stage closed; else = exit_ns)
  // The section's access to the protected resource, for judging fenced runs
  // at the resource (checker.h, classify_overlap): just before the counter
  // read was sent, and just after the write's reply came back (0: the write
  // never completed -- its window never closed).
  std::int64_t read_ns = 0;
  std::int64_t written_ns = 0;
  std::uint64_t token = 0;       // fencing token, when has_token
  std::uint32_t client = 0;
  std::uint8_t has_token = 0;
  std::uint8_t release = kNoReleaseOutcome;  // locklab::Release value once stage is closed
  // The lease was lost under the holder. The client fills it with the lock's
  // own word (lease_lost_word); where the run's witness could tell, its
  // finding replaces it (run/lease_witness.h: the servers saw the key expire,
  // be deleted, or its PTTL run out before the holder left).
  std::uint8_t lease_lost = 0;
  // The lock's own word: its release found the key gone or someone else's,
  // or its leases_lost() (failed watchdog renewals) grew between entering and
  // release() returning.
  std::uint8_t lease_lost_word = 0;
  CsWrite write = CsWrite::written;
  CsStage stage = CsStage::closed;
};

// Per-client counters; written only by that client.
struct ClientSlot {
  std::atomic<std::int64_t> records{0};  // CsRecords written so far
  std::atomic<std::int64_t> attempts{0};
  std::atomic<std::int64_t> acquired{0};
  std::atomic<std::int64_t> timeouts{0};
  std::atomic<std::int64_t> unknown{0};
  std::atomic<std::int64_t> errors{0};
  std::atomic<std::int64_t> release_errors{0};
  std::atomic<std::int64_t> stale_writes_rejected{0};
  std::atomic<std::int64_t> counter_errors{0};
  std::atomic<std::int64_t> round_trips{0};  // redis::traffic() delta of this process (process mode)
  std::atomic<std::int64_t> commands{0};
  std::atomic<std::int64_t> leases_lost{0};
  std::atomic<std::int64_t> node_voted_for{0};
  std::atomic<std::int64_t> node_voted_against{0};
  std::atomic<std::int64_t> node_errored{0};
  std::atomic<std::int64_t> node_timed_out{0};
  std::atomic<std::int32_t> has_node_tally{0};
  std::atomic<std::int64_t> started_ns{0};   // passed the start barrier
  std::atomic<std::int64_t> finished_ns{0};  // left the loop
  std::atomic<std::int64_t> died_ns{0};      // the coordinator saw the process die (crash, signal, kill)
  // A moment after which the client provably could not act: it stamped it
  // itself just before _exit (a crash at a step point, stamp_own_death()),
  // or the coordinator just after its SIGKILL to the client was sent
  // (stamp_killed(), which also takes it out of the live occupancy). Ends an
  // open section only once died_ns confirms the death.
  std::atomic<std::int64_t> dead_by_ns{0};
  std::atomic<std::int64_t> open_wait_ns{0}; // when it finished while still waiting: that wait's start
  std::atomic<std::int32_t> truncated{0};    // its record array filled up; it stopped early
  std::atomic<std::int32_t> inside{0};       // inside a critical section right now
  std::atomic<std::int32_t> pid{0};
  char last_error[240] = {};                 // the last error message (setup or runtime)
  // Library calls that had not returned past the harness's bound (DistributedLock::blocked()).
  std::atomic<std::int64_t> blocked_calls{0};
  std::atomic<std::int64_t> blocked_acquires{0};  // of them, acquires (counted unknown: run.cpp)
  std::atomic<std::int64_t> blocked_longest_ms{0};
  char blocked_what[240] = {};
  // Section-oracle commands that failed (the client's, and the coordinator's
  // removal of it after it died): the oracle may have missed a holder.
  std::atomic<std::int64_t> oracle_errors{0};
};

// The part every client touches.
struct SharedHeader {
  std::atomic<std::int32_t> ready{0};      // clients past setup, waiting at the barrier
  std::atomic<std::int32_t> failed{0};     // clients that could not set up
  std::atomic<std::int32_t> go{0};         // the barrier: all start together
  std::atomic<std::int32_t> stop{0};       // the coordinator ends a duration run
  std::atomic<std::int64_t> go_ns{0};
  std::atomic<std::int64_t> ops_claimed{0};  // --ops: attempts handed out so far
  std::atomic<std::int32_t> occupancy{0};    // clients inside a critical section now
  std::atomic<std::int32_t> max_occupancy{0};
  std::atomic<std::int32_t> holder{-1};      // the client that entered last and is still inside
  std::atomic<std::int64_t> last_enter_ns{0};
};

// The mapping. Move-only; unmapped on destruction (children inherit it by fork).
class SharedHistory {
 public:
  static std::optional<SharedHistory> create(int clients, std::size_t capacity_per_client, std::string* why);
  SharedHistory(SharedHistory&& other) noexcept;
  SharedHistory& operator=(SharedHistory&&) = delete;
  SharedHistory(const SharedHistory&) = delete;
  ~SharedHistory();

  SharedHeader& header() const { return *header_; }
  ClientSlot& slot(int client) const { return slots_[client]; }
  int clients() const { return clients_; }
  std::size_t capacity() const { return capacity_; }

  // Appends a record for `client` and returns it for the client to fill in
  // place (the record is visible to records() from now on); nullptr when its
  // array is full (the slot is flagged truncated).
  CsRecord* append(int client, const CsRecord& record) const;
  void set_error(int client, const std::string& message) const;

  // Occupancy bookkeeping around a critical section (the live oracle).
  void enter(int client) const;
  void exit(int client) const;
  // A client process died (crash at a step point, SIGKILL): stamps when the
  // coordinator saw it (the end of a section it died inside); if it was
  // inside, it no longer is -- a dead client holds nothing the oracle should count.
  void forget_dead(int client) const;

  // `client` can act no more from now on: the coordinator saw it dead after
  // a SIGKILL, or the client itself is about to _exit (stamp_own_death). The
  // first stamp stays; it leaves the live occupancy now, not when reaped.
  // Returns the stamp the slot holds.
  std::int64_t stamp_killed(int client) const;
  // In a client process, once after fork(): the slot stamp_own_death() writes.
  void become_own(int client) const;

  // Every client's records, sorted by enter_ns. A record still `inside` (its
  // client died or stopped in the section) gets the latest moment the client
  // could still have acted as its exit: for a client confirmed dead
  // (died_ns), its dead_by_ns if stamped, else when the coordinator saw it
  // die; else when it finished, else now (records() is read after every
  // client is gone). Never earlier: a section is not shortened to hide an
  // overlap -- dead_by_ns is stamped only where the client could no longer act.
  std::vector<CsRecord> records() const;
  // The stage of `client`'s latest record as it stands now, read while the run
  // goes on (a fault's condition "another client got in and wrote"); nullopt:
  // none yet. Only the stage: the rest of a record being filled in is not
  // safe to read concurrently. An acquire load, paired with set_stage().
  std::optional<CsStage> last_stage(int client) const;
  // Moves a record on to `stage` with a release store, so a concurrent
  // last_stage() reads it well-defined, with every field written before it.
  static void set_stage(CsRecord& record, CsStage stage);

 private:
  SharedHistory(void* base, std::size_t bytes, int clients, std::size_t capacity);
  void leave_dead(int client) const;  // out of the live occupancy, once
  CsRecord* records_of(int client) const { return records_ + static_cast<std::size_t>(client) * capacity_; }

  void* base_;
  std::size_t bytes_;
  int clients_;
  std::size_t capacity_;
  SharedHeader* header_;
  ClientSlot* slots_;
  CsRecord* records_;
};

// In a client process about to _exit of its own accord (a crash at a step
// point): stamps now as its death in the slot become_own() named. Nothing in
// a process that named none (the coordinator, a thread client). Returns the
// stamp (now, where nothing was stamped), for a fault to record the death at
// the very moment the section ends: a second reading of the clock could come
// after a preemption, past the section's end.
std::int64_t stamp_own_death();

}  // namespace locklab::harness
