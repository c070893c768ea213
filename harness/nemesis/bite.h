// A fault's bite: whether the race its column is about really had its chance
// in this run (docs/harness.md, "Bite").
//
// Acting is not enough. A pause that ended before the lease could lapse, a
// crash nobody waited behind, a cut that healed inside one ttl: each acted,
// and none gave the lock anything to survive. A fault bites when the race's
// OPPORTUNITY was there -- stated as a precondition that the history (or the
// lock server, read by the fault) shows -- whatever the lock then did with it.
// A lock immune by design still gets the opportunity, and then reads safe by
// design (setnx has no TTL to lose under a long pause).
//
// The evidence is read once every client is gone: the recorded sections and
// each client's waits (from the moment it began trying until it got in, or
// the run ended with it still trying).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "history/history.h"

namespace locklab::harness {

// How much earlier than our acquire call the server may date a lease (its
// cached clock): a bound on the window, not a measurement.
inline constexpr std::chrono::milliseconds kServerClockSlack{5};

// The servers lost a holder's key while it was inside, as the fault read them
// (DUMP before and after it acted): server evidence that its lease is gone,
// which the run's witness cannot give for a node that restarted under it.
struct KeyLoss {
  int client = -1;
  std::int64_t at_ns = 0;  // the reading after the fault
};

struct Bite {
  Bite() = default;
  Bite(bool bit_, std::string what_) : bit(bit_), what(std::move(what_)) {}
  bool bit = false;
  std::string what;  // what was observed, with times (ms since the barrier), or why it did not bite
  std::optional<KeyLoss> key_lost;  // set where the fault read the holder's key gone (node-restart, failover)
  // Bit by the lock's refusal: the race had its chance (a cluster failover with the key on the
  // master only) and every acquire was refused, so nobody held. Such a cell is never `safe`: the
  // refusals were the lock's unavailability (sweeps/cell_class_of_run.cpp reads liveness).
  bool refused_not_held = false;
  // Not bitten because the fault's own schedule missed (catch=: a waiter not caught,
  // nemesis/caught_waiters.h; split=: a round not split, nemesis/split_votes.h): the cell is
  // `error` even where a client's service died, which otherwise stands as liveness (run/run.cpp,
  // judge_faults_bit).
  bool schedule_missed = false;
};

// A span of monotonic ns during which a client was trying to acquire.
struct WaitSpan {
  std::int64_t from_ns = 0;
  std::int64_t to_ns = 0;
};

struct BiteEvidence {
  std::vector<CsRecord> records;              // every section, by enter_ns (SharedHistory::records())
  std::vector<std::vector<WaitSpan>> waits;   // per client
  std::int64_t go_ns = 0;
  std::int64_t end_ns = 0;
  std::chrono::milliseconds ttl{0};  // the lease the lock really takes (--ttl rounded up to its resolution)
  bool auto_extends = false;         // a watchdog renews it while the holder runs

  static BiteEvidence from(const SharedHistory& history, std::chrono::milliseconds ttl, bool auto_extends);

  // The latest moment the lease of `section` can have ended by, given that
  // the holder stopped renewing at `stopped_ns` (a pause, a cut; 0: it does
  // not renew): its entry + ttl (the key was set before the acquire returned),
  // or for a lock that renews itself the later of that and the stop + ttl (a
  // renewal may have come just before). A stop past it has let the lease go.
  std::int64_t latest_lease_end(const CsRecord& section, std::int64_t stopped_ns) const;
  // The earliest moment it can have ended: its acquire call + ttl, less the
  // server clock's slack (Redis stamps a key's expiry from the time it cached
  // at the start of its event loop turn, which may be a little earlier).
  std::int64_t earliest_lease_end(const CsRecord& section) const;

  // "412.3 ms": a moment relative to the barrier.
  std::string at(std::int64_t ns) const;
  // The section `client` was in at `ns` (entered at or before it, not yet left), if any.
  std::optional<CsRecord> section_of(int client, std::int64_t ns) const;
  // The first moment in [from, to] at which a client other than `except` was
  // trying to acquire, and who: the opportunity a contender needs.
  struct Hit {
    int client = -1;
    std::int64_t ns = 0;
  };
  std::optional<Hit> other_waiting(int except, std::int64_t from, std::int64_t to) const;
  // Whether `client` was trying to acquire at some moment in [from, to].
  std::optional<std::int64_t> waiting(int client, std::int64_t from, std::int64_t to) const;
  // The first section of a client other than `except` entered in [from, to].
  std::optional<CsRecord> other_entered(int except, std::int64_t from, std::int64_t to) const;
  // The first two sections of different clients open at once, both entered
  // after `after_ns` (one not left by the end counts as open until end_ns):
  // the earlier-entered first.
  std::optional<std::pair<CsRecord, CsRecord>> first_overlap_after(std::int64_t after_ns) const;
};

// "client C was trying at T": the contender part of a bite's text.
std::string contender_text(const BiteEvidence& evidence, const BiteEvidence::Hit& hit);

// A client stopped by a pause (holder-pause at a step point or a protocol
// point), from the stop to the SIGCONT (monotonic ns).
struct PauseSpan {
  int client = -1;
  std::string at;
  std::int64_t since_ns = 0;
  std::int64_t until_ns = 0;
};

// The bite of a pause, from its first span. Stopped inside its section: the
// pause outlasted the earliest end of its lease while another client was
// trying. Stopped elsewhere (its release window): another client entered
// while it was stopped and was still inside when it went on.
Bite pause_bite(const BiteEvidence& evidence, const std::vector<PauseSpan>& spans);

// The bite of a crash: `client` died at `died_ns` inside its section (or after
// it, before its release returned), or leaving `key_without_ttl` (a key with
// no TTL; "" none), and another client was trying afterwards.
Bite crash_bite(const BiteEvidence& evidence, int client, std::int64_t died_ns, const std::string& key_without_ttl);

}  // namespace locklab::harness
