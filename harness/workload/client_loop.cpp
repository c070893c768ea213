// One client's loop (client_loop.h): its lock, counter and oracle built in the client, the
// start barrier, acquire -> critical section -> release, and its counts left in its slot.
#include "workload/client_loop.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "support/process_control.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

void add(std::atomic<std::int64_t>& counter, std::int64_t n = 1) { counter.fetch_add(n, std::memory_order_relaxed); }

}  // namespace

ClientLoop::ClientLoop(const WorkloadConfig& config, const SharedHistory& history, int index, StepHook hook,
                       std::shared_ptr<const WallClock> clock)
    : config_(config),
      history_(history),
      index_(index),
      slot_(history.slot(index)),
      hook_(std::move(hook)),
      clock_(std::move(clock)) {}

int ClientLoop::run(bool report_traffic) {
  LockConfig lock_config = config_.lock;
  lock_config.step = hook_;
  if (clock_) lock_config.clock = clock_;  // a skewed client (the clock-skew fault)
  lock_config.owner.clear();  // a fresh identity per client
  if (config_.client_servers) lock_config.servers = config_.client_servers(index_);
  auto lock = config_.make_lock(lock_config, index_);
  if (!lock) {
    history_.set_error(index_, "client " + std::to_string(index_) + ": " + lock.error().message);
    history_.header().failed.fetch_add(1);
    return 1;
  }
  lock_ = std::move(lock).value();
  counter_.emplace(config_.counter, config_.counter_key);
  if (config_.section_oracles) {
    auto oracle = config_.section_oracles->connect(index_);
    if (!oracle) {
      history_.set_error(index_, "client " + std::to_string(index_) + ": " + oracle.error().message);
      history_.header().failed.fetch_add(1);
      return 1;
    }
    oracle_ = std::move(oracle).value();
  }
  slot_.pid.store(static_cast<std::int32_t>(::getpid()));

  history_.header().ready.fetch_add(1);
  while (history_.header().go.load() == 0) std::this_thread::sleep_for(100us);
  if (history_.header().stop.load() != 0 && history_.header().go_ns.load() == 0) return 0;  // aborted at setup

  const redis::Traffic before = redis::traffic();
  slot_.started_ns.store(monotonic_ns());
  loop();
  finish(before, report_traffic);
  return end_lock();
}

bool ClientLoop::keep_going() {
  if (history_.header().stop.load(std::memory_order_relaxed) != 0) return false;
  if (config_.ops) return history_.header().ops_claimed.fetch_add(1) < *config_.ops;
  return true;
}

// Ends what the lock runs beside this process (an adapter: its stdin closed,
// then reaped) here, not by the kernel after our _exit; 1 when it broke
// during the run.
// An adapter that exited mid-run is a crash of this client (the service it stands for
// died; its hold stays until the TTL), with the line it died on; one that misbehaved is a
// failure (docs/adapters.md, "An adapter that dies").
int ClientLoop::end_lock() {
  const std::string died = lock_->died();
  const std::string broke = lock_->broken();
  if (!died.empty()) {
    history_.set_error(index_, died);
  } else if (!broke.empty()) {
    history_.set_error(index_, broke);
  }
  lock_->close();
  if (!died.empty()) return kAdapterDiedExitCode;
  return broke.empty() ? 0 : 1;
}

void ClientLoop::loop() {
  while (!lock_broke() && keep_going()) {
    if (want_ns_ == 0) want_ns_ = monotonic_ns();
    const std::int64_t invoke = monotonic_ns();
    const Acquire outcome = lock_->try_acquire(config_.wait);
    add(slot_.attempts);
    switch (outcome) {
      case Acquire::acquired:
        add(slot_.acquired);
        if (!critical_section(invoke)) return;
        break;
      case Acquire::timed_out: add(slot_.timeouts); break;
      case Acquire::unknown:
        // We may hold it; Jepsen treats this as indeterminate. Releasing
        // "just in case" would let generations with a blind DEL delete
        // someone else's lock, so we leave it to expire and count it.
        add(slot_.unknown);
        note_error();
        // As after an error: a client cut off (or whose replies are lost)
        // must not spin through its attempts while the others wait.
        std::this_thread::sleep_for(config_.lock.retry_interval.value_or(5ms));
        break;
      case Acquire::error:
        add(slot_.errors);
        note_error();
        std::this_thread::sleep_for(config_.lock.retry_interval.value_or(5ms));  // no hot loop on a dead server
        break;
    }
  }
}

// The section goes on record as it is entered and is filled in place, so a
// client that dies anywhere after this leaves its section (and how far its
// write got) for the checker. Returns false when the history is full: the
// client then gives the lock back unused and stops.
bool ClientLoop::critical_section(std::int64_t invoke) {
  const std::uint64_t leases_lost_before = lock_->leases_lost();  // a renewal failing from here on fails under us
  CsRecord start;
  start.client = static_cast<std::uint32_t>(index_);
  start.want_ns = want_ns_;
  start.invoke_ns = invoke;
  start.enter_ns = monotonic_ns();
  start.write = CsWrite::none;
  start.stage = CsStage::inside;
  want_ns_ = 0;
  CsRecord* record = history_.append(index_, start);
  if (record == nullptr) {
    (void)lock_->release();
    return false;
  }
  // The oracle's section nests inside the record's [enter_ns, exit_ns) and
  // around the live occupancy (which a fault watches for a holder): the
  // history never sees less than the oracle, and a fault that acts on a
  // holder acts while the oracle counts it.
  observe(oracle_ ? oracle_->enter() : Status{Done{}});
  history_.enter(index_);
  if (hook_) hook_(kCsEnter);

  const auto token = lock_->fencing_token();
  if (token) {
    record->has_token = 1;
    record->token = *token;
  }
  crash_if_adapter_died();
  record->write = increment(token, *record);

  if (hook_) hook_(kCsExit);
  history_.exit(index_);
  observe(oracle_ ? oracle_->leave() : Status{Done{}});
  // Stamped after leaving the occupancy count: every recorded interval covers
  // the time the live counter counted it, so the counter never sees a holder
  // the records cannot show.
  record->exit_ns = monotonic_ns();
  SharedHistory::set_stage(*record, CsStage::left);  // a fault's condition reads it while we go on
  const Release released = lock_->release();
  record->released_ns = monotonic_ns();
  record->release = static_cast<std::uint8_t>(released);
  record->lease_lost_word = lease_lost_under_us(released, leases_lost_before) ? 1 : 0;
  record->lease_lost = record->lease_lost_word;  // the run's witness may overrule it (run/lease_witness.h)
  SharedHistory::set_stage(*record, CsStage::closed);
  if (released == Release::error && lock_->died().empty()) {  // a dead adapter: the crash, not an error
    add(slot_.release_errors);
    note_error();
  }
  return true;
}

// An adapter that died inside the section (docs/adapters.md, "An adapter that dies"): the
// service it stands for is gone, so its client crashes here, its record left open, as at a
// step-point crash, and the section is judged like holder-crash. Learning it only at the
// release would write the counter for a dead service, past its TTL: a false violation.
void ClientLoop::crash_if_adapter_died() {
  if (lock_->died_now()) crash_with_adapter();
}

void ClientLoop::crash_with_adapter() {
  history_.set_error(index_, lock_->died());
  stamp_own_death();
  exit_with_group(kAdapterDiedExitCode);
}

// The release found the key gone or someone else's, or a watchdog renewal
// failed while we held it: the lease ended under us (docs/harness.md, "exposed").
bool ClientLoop::lease_lost_under_us(Release released, std::uint64_t leases_lost_before) const {
  return released == Release::already_expired || released == Release::not_owner ||
         lock_->leases_lost() > leases_lost_before;
}

// GET, hold, SET value+1 (the fenced variants when we have a token).
// `record.write` says `pending` while the SET is on its way; `read_ns` and
// `written_ns` bound the section's access to the resource.
CsWrite ClientLoop::increment(std::optional<std::uint64_t> token, CsRecord& record) {
  record.read_ns = monotonic_ns();
  observe_read(token);
  auto read = counter_->read(token);
  if (!read) {
    (void)counter_failed(read.error().message);
    return CsWrite::read_failed;  // no SET was sent: nothing can have landed
  }
  if (read->refused) {
    observe_write(/*refused=*/true);
    add(slot_.stale_writes_rejected);
    return CsWrite::refused;
  }
  if (hook_) hook_(kCsRead);
  // The hold, ended by the adapter's death: no SET for a service that is gone.
  if (config_.hold.count() > 0 ? lock_->died_within(config_.hold) : lock_->died_now()) crash_with_adapter();
  record.write = CsWrite::pending;
  auto written = counter_->write(read->value + 1, token);
  if (!written) return counter_failed(written.error().message);
  observe_write(/*refused=*/!*written);
  if (!*written) {
    add(slot_.stale_writes_rejected);
    return CsWrite::refused;
  }
  record.written_ns = monotonic_ns();
  return CsWrite::written;
}

// The section oracle's resource events (none when the write failed: its
// window stays open, the widest it could have been).
void ClientLoop::observe_read(std::optional<std::uint64_t> token) {
  if (oracle_) observe(oracle_->observe_read(token));
}

void ClientLoop::observe_write(bool refused) {
  if (oracle_) observe(oracle_->observe_write(refused));
}

// A failed oracle command: the oracle may now miss a holder (an INCR lost,
// a DECR applied), so the run cannot be judged safe: counted, a measurement error.
void ClientLoop::observe(const Status& status) {
  if (status) return;
  add(slot_.oracle_errors);
  history_.set_error(index_, "oracle: " + status.error().message);
}

CsWrite ClientLoop::counter_failed(const std::string& why) {
  add(slot_.counter_errors);
  history_.set_error(index_, "counter: " + why);
  return CsWrite::failed;
}

void ClientLoop::note_error() {
  if (!lock_->last_error().empty()) history_.set_error(index_, lock_->last_error());
}

void ClientLoop::finish(const redis::Traffic& before, bool report_traffic) {
  if (want_ns_ != 0) slot_.open_wait_ns.store(monotonic_ns() - want_ns_);
  if (report_traffic) {
    const redis::Traffic after = redis::traffic();
    slot_.round_trips.store(static_cast<std::int64_t>(after.round_trips - before.round_trips));
    slot_.commands.store(static_cast<std::int64_t>(after.commands - before.commands));
  }
  slot_.leases_lost.store(static_cast<std::int64_t>(lock_->leases_lost()));
  const Blocked blocked = lock_->blocked();
  slot_.blocked_calls.store(static_cast<std::int64_t>(blocked.calls));
  slot_.blocked_acquires.store(static_cast<std::int64_t>(blocked.acquires));
  slot_.blocked_longest_ms.store(blocked.longest_ms);
  std::snprintf(slot_.blocked_what, sizeof slot_.blocked_what, "%s", blocked.what.c_str());
  if (const auto tally = lock_->node_tally()) {
    slot_.has_node_tally.store(1);
    slot_.node_voted_for.store(static_cast<std::int64_t>(tally->voted_for));
    slot_.node_voted_against.store(static_cast<std::int64_t>(tally->voted_against));
    slot_.node_errored.store(static_cast<std::int64_t>(tally->errored));
    slot_.node_timed_out.store(static_cast<std::int64_t>(tally->timed_out));
  }
  slot_.finished_ns.store(monotonic_ns());
}

}  // namespace locklab::harness
