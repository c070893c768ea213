#include "workload/workload.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "workload/counter_resource.h"
#include "registry.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

void add(std::atomic<std::int64_t>& counter, std::int64_t n = 1) { counter.fetch_add(n, std::memory_order_relaxed); }

// One client's view of the run; shared by process and thread mode.
class Client {
 public:
  Client(const WorkloadConfig& config, const SharedHistory& history, int index, StepHook hook,
         std::shared_ptr<const WallClock> clock)
      : config_(config),
        history_(history),
        index_(index),
        slot_(history.slot(index)),
        hook_(std::move(hook)),
        clock_(std::move(clock)) {}

  // Returns the process exit code for process mode.
  int run(bool report_traffic) {
    LockConfig lock_config = config_.lock;
    lock_config.step = hook_;
    if (clock_) lock_config.clock = clock_;  // a skewed client (the clock-skew fault)
    lock_config.owner.clear();  // a fresh identity per client
    if (config_.client_servers) lock_config.servers = config_.client_servers(index_);
    auto lock = make_lock(config_.lock_name, lock_config);
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
    return 0;
  }

 private:
  bool keep_going() {
    if (history_.header().stop.load(std::memory_order_relaxed) != 0) return false;
    if (config_.ops) return history_.header().ops_claimed.fetch_add(1) < *config_.ops;
    return true;
  }

  void loop() {
    while (keep_going()) {
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
  bool critical_section(std::int64_t invoke) {
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
    record->lease_lost = lease_lost_under_us(released, leases_lost_before) ? 1 : 0;
    SharedHistory::set_stage(*record, CsStage::closed);
    if (released == Release::error) {
      add(slot_.release_errors);
      note_error();
    }
    return true;
  }

  // The release found the key gone or someone else's, or a watchdog renewal
  // failed while we held it: the lease ended under us (docs/harness.md, "exposed").
  bool lease_lost_under_us(Release released, std::uint64_t leases_lost_before) const {
    return released == Release::already_expired || released == Release::not_owner ||
           lock_->leases_lost() > leases_lost_before;
  }

  // GET, hold, SET value+1 (the fenced variants when we have a token).
  // `record.write` says `pending` while the SET is on its way; `read_ns` and
  // `written_ns` bound the section's access to the resource.
  CsWrite increment(std::optional<std::uint64_t> token, CsRecord& record) {
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
    if (config_.hold.count() > 0) std::this_thread::sleep_for(config_.hold);
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
  void observe_read(std::optional<std::uint64_t> token) {
    if (oracle_) observe(oracle_->observe_read(token));
  }
  void observe_write(bool refused) {
    if (oracle_) observe(oracle_->observe_write(refused));
  }
  // A failed oracle command: the oracle may now miss a holder (an INCR lost,
  // a DECR applied), so the run cannot be judged safe: counted, a measurement error.
  void observe(const Status& status) {
    if (status) return;
    add(slot_.oracle_errors);
    history_.set_error(index_, "oracle: " + status.error().message);
  }

  CsWrite counter_failed(const std::string& why) {
    add(slot_.counter_errors);
    history_.set_error(index_, "counter: " + why);
    return CsWrite::failed;
  }

  void note_error() {
    if (!lock_->last_error().empty()) history_.set_error(index_, lock_->last_error());
  }

  void finish(const redis::Traffic& before, bool report_traffic) {
    if (want_ns_ != 0) slot_.open_wait_ns.store(monotonic_ns() - want_ns_);
    if (report_traffic) {
      const redis::Traffic after = redis::traffic();
      slot_.round_trips.store(static_cast<std::int64_t>(after.round_trips - before.round_trips));
      slot_.commands.store(static_cast<std::int64_t>(after.commands - before.commands));
    }
    slot_.leases_lost.store(static_cast<std::int64_t>(lock_->leases_lost()));
    if (const auto tally = lock_->node_tally()) {
      slot_.has_node_tally.store(1);
      slot_.node_voted_for.store(static_cast<std::int64_t>(tally->voted_for));
      slot_.node_voted_against.store(static_cast<std::int64_t>(tally->voted_against));
      slot_.node_errored.store(static_cast<std::int64_t>(tally->errored));
      slot_.node_timed_out.store(static_cast<std::int64_t>(tally->timed_out));
    }
    slot_.finished_ns.store(monotonic_ns());
  }

  const WorkloadConfig& config_;
  const SharedHistory& history_;
  int index_;
  ClientSlot& slot_;
  StepHook hook_;
  std::shared_ptr<const WallClock> clock_;
  std::unique_ptr<DistributedLock> lock_;
  std::optional<CounterResource> counter_;
  std::unique_ptr<SectionOracle> oracle_;
  std::int64_t want_ns_ = 0;
};

// In the child right after fork(): it must not run the parent's signal guard
// (that would SIGKILL the servers) and must die with the parent.
void become_client_process(pid_t parent) {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
}

class Progress {
 public:
  Progress(const WorkloadConfig& config, const SharedHistory& history)
      : enabled_(config.progress && ::isatty(STDERR_FILENO) == 1), config_(config), history_(history) {}
  ~Progress() {
    if (printed_) std::fprintf(stderr, "\r\033[K");
  }
  void update(std::int64_t now_ns) {
    if (!enabled_ || now_ns - last_ns_ < 200'000'000) return;
    const std::int64_t go = history_.header().go_ns.load();
    if (now_ns - go < 1'000'000'000) return;  // only runs longer than a second
    last_ns_ = now_ns;
    std::int64_t acquired = 0;
    for (int i = 0; i < history_.clients(); ++i) acquired += history_.slot(i).acquired.load();
    const double elapsed = static_cast<double>(now_ns - go) / 1e9;
    if (config_.ops)
      std::fprintf(stderr, "\r\033[Klocklab: %s  %.1f s  attempts %lld/%lld  acquired %lld", config_.lock_name.c_str(),
                   elapsed, static_cast<long long>(std::min(history_.header().ops_claimed.load(), *config_.ops)),
                   static_cast<long long>(*config_.ops), static_cast<long long>(acquired));
    else
      std::fprintf(stderr, "\r\033[Klocklab: %s  %.1f/%.1f s  acquired %lld", config_.lock_name.c_str(), elapsed,
                   static_cast<double>(config_.duration.count()) / 1e3, static_cast<long long>(acquired));
    std::fflush(stderr);
    printed_ = true;
  }

 private:
  bool enabled_;
  const WorkloadConfig& config_;
  const SharedHistory& history_;
  std::int64_t last_ns_ = 0;
  bool printed_ = false;
};

// Waits until every client is at the barrier (or one failed / the deadline passed).
Status await_setup(const WorkloadConfig& config, const SharedHistory& history,
                          const std::function<bool()>& all_gone) {
  const auto deadline = Clock::now() + config.setup_timeout;
  while (history.header().ready.load() + history.header().failed.load() < config.clients) {
    if (Clock::now() > deadline || all_gone())
      return Error{ErrorKind::timeout, "clients did not get ready within " +
                                                         std::to_string(config.setup_timeout.count()) + " ms"};
    std::this_thread::sleep_for(1ms);
  }
  if (history.header().failed.load() > 0) {
    for (int i = 0; i < config.clients; ++i)
      if (history.slot(i).last_error[0] != '\0') return Error{ErrorKind::usage, history.slot(i).last_error};
    return Error{ErrorKind::io, "a client failed to set up"};
  }
  return Done{};
}

// The coordinator's watch while clients run: holder changes, ticks, the
// duration limit, the hard deadline. `finished()` polls the clients.
// Returns true when the hard deadline ran out.
bool supervise(const WorkloadConfig& config, const SharedHistory& history, Nemesis& nemesis, NemesisContext& context,
               const std::function<bool()>& finished, const std::function<void()>& kill_all) {
  Progress progress(config, history);
  const auto start = Clock::now();
  const auto limit = hard_deadline(config);
  std::int64_t last_seen_enter = 0;
  while (!finished()) {
    const auto now = Clock::now();
    if (!config.ops && now - start >= config.duration) history.header().stop.store(1);
    if (now - start >= limit) {
      history.header().stop.store(1);
      kill_all();
      return true;
    }
    const std::int64_t entered = history.header().last_enter_ns.load();
    if (entered != last_seen_enter) {
      last_seen_enter = entered;
      const int holder = history.header().holder.load();
      if (holder >= 0) nemesis.holder_entered(context, holder);
    }
    nemesis.tick(context);
    progress.update(monotonic_ns());
    std::this_thread::sleep_for(2ms);
  }
  return false;
}

std::int64_t last_finish(const SharedHistory& history, std::int64_t fallback) {
  std::int64_t end = 0;
  for (int i = 0; i < history.clients(); ++i) end = std::max(end, history.slot(i).finished_ns.load());
  return end > 0 ? end : fallback;
}

// A reaped client holds nothing: the oracle's section it may have died inside
// ends now, right after the history's (forget_dead). Harmless for a client
// that exited outside any section.
void client_left_oracle(const WorkloadConfig& config, const SharedHistory& history, int client) {
  if (!config.section_oracles) return;
  if (auto removed = config.section_oracles->client_died(client); !removed) {
    history.slot(client).oracle_errors.fetch_add(1);
    history.set_error(client, "oracle: " + removed.error().message);
  }
}

Result<WorkloadOutcome> run_processes(const WorkloadConfig& config, const SharedHistory& history,
                                             Nemesis& nemesis, NemesisContext& context,
                                             const std::function<void()>& at_barrier) {
  WorkloadOutcome out;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  std::vector<pid_t> running;
  for (int i = 0; i < config.clients; ++i) {
    StepHook hook = nemesis.client_step_hook(i);
    auto clock = nemesis.client_clock(i);
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (pid_t child : running) ::kill(child, SIGKILL);
      for (pid_t child : running) ::waitpid(child, nullptr, 0);
      return Error{ErrorKind::io, std::string("fork: ") + std::strerror(errno)};
    }
    if (pid == 0) {
      become_client_process(parent);
      // Never the parent's atexit handlers or destructors (they would stop the
      // coordinator's redis-servers): every way out of a client is _exit.
      try {
        Client client(config, history, i, std::move(hook), std::move(clock));
        ::_exit(client.run(/*report_traffic=*/true));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "locklab: client %d: %s\n", i, e.what());
      } catch (...) {
        std::fprintf(stderr, "locklab: client %d: unknown exception\n", i);
      }
      ::_exit(1);
    }
    running.push_back(pid);
  }
  out.pids = running;
  context.client_pids = running;

  std::vector<bool> reaped(running.size(), false);
  auto reap = [&] {
    bool all = true;
    for (std::size_t i = 0; i < running.size(); ++i) {
      if (reaped[i]) continue;
      int status = 0;
      if (::waitpid(running[i], &status, WNOHANG) == running[i]) {
        reaped[i] = true;
        // The oracle's section ends first, so the history's (closed by
        // forget_dead) still covers it.
        client_left_oracle(config, history, static_cast<int>(i));
        history.forget_dead(static_cast<int>(i));
        const bool crashed = (WIFEXITED(status) && WEXITSTATUS(status) == kCrashExitCode) || WIFSIGNALED(status);
        if (crashed) {
          ++out.crashed_clients;
          out.crashed_ns.push_back(history.slot(static_cast<int>(i)).died_ns.load());
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          ++out.failed_clients;  // it threw or gave up: a client that vanished silently must not read as safe
        }
      } else {
        all = false;
      }
    }
    return all;
  };
  auto kill_all = [&] {
    for (std::size_t i = 0; i < running.size(); ++i)
      if (!reaped[i]) {
        ::kill(running[i], SIGKILL);
        ::waitpid(running[i], nullptr, 0);
        // The oracle's section ends first, so the history's (closed by
        // forget_dead) still covers it.
        client_left_oracle(config, history, static_cast<int>(i));
        history.forget_dead(static_cast<int>(i));
        reaped[i] = true;
        ++out.killed_clients;
      }
  };

  if (auto ready = await_setup(config, history, reap); !ready) {
    history.header().stop.store(1);
    history.header().go.store(1);  // let the waiting ones leave
    const auto deadline = Clock::now() + 5s;
    while (!reap() && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
    kill_all();
    return ready.error();
  }

  if (at_barrier) at_barrier();
  nemesis.before_run(context);
  context.started = Clock::now();
  out.go_ns = monotonic_ns();
  history.header().go_ns.store(out.go_ns);
  history.header().go.store(1);
  // Past the deadline (e.g. a client left SIGSTOPped at a step point) kill_all() counts the killed.
  supervise(config, history, nemesis, context, reap, kill_all);
  while (!reap()) std::this_thread::sleep_for(1ms);
  out.end_ns = last_finish(history, monotonic_ns());
  nemesis.after_run(context);
  return out;
}

Result<WorkloadOutcome> run_threads(const WorkloadConfig& config, const SharedHistory& history,
                                           Nemesis& nemesis, NemesisContext& context,
                                           const std::function<void()>& at_barrier) {
  WorkloadOutcome out;
  std::vector<std::thread> threads;
  std::atomic<int> done{0};
  std::atomic<int> failed{0};
  threads.reserve(static_cast<std::size_t>(config.clients));
  for (int i = 0; i < config.clients; ++i)
    threads.emplace_back([&, i, hook = nemesis.client_step_hook(i), clock = nemesis.client_clock(i)]() mutable {
      try {
        Client client(config, history, i, std::move(hook), std::move(clock));
        if (client.run(/*report_traffic=*/false) != 0) failed.fetch_add(1);  // traffic is process-wide: measured once below
      } catch (const std::exception& e) {
        std::fprintf(stderr, "locklab: client %d: %s\n", i, e.what());
        failed.fetch_add(1);  // the thread is gone: its share of the run is missing
      }
      done.fetch_add(1);
    });
  auto finished = [&] { return done.load() == config.clients; };
  auto join_all = [&] {
    for (auto& thread : threads) thread.join();
  };

  if (auto ready = await_setup(config, history, finished); !ready) {
    history.header().stop.store(1);
    history.header().go.store(1);
    join_all();
    return ready.error();
  }
  if (at_barrier) at_barrier();
  nemesis.before_run(context);
  context.started = Clock::now();
  const redis::Traffic before = redis::traffic();
  out.go_ns = monotonic_ns();
  history.header().go_ns.store(out.go_ns);
  history.header().go.store(1);
  // Threads cannot be killed one by one: past the hard deadline we only stop
  // handing out work and wait (each try_acquire is bounded by --wait). The
  // threads still running then count as killed: the run overran, its verdict is error.
  supervise(config, history, nemesis, context, finished,
            [&] { out.killed_clients = config.clients - done.load(); });
  join_all();
  out.failed_clients = failed.load();
  const redis::Traffic after = redis::traffic();
  out.thread_traffic = {after.commands - before.commands, after.round_trips - before.round_trips};
  out.end_ns = last_finish(history, monotonic_ns());
  nemesis.after_run(context);
  return out;
}

}  // namespace

std::chrono::milliseconds hard_deadline(const WorkloadConfig& config) {
  using std::chrono::milliseconds;
  const milliseconds per_attempt = config.wait + config.hold + 2000ms;
  if (!config.ops) return config.duration + per_attempt + config.fault_allowance + 10s;
  // Every attempt is bounded by wait (+ hold); clients work in parallel.
  const auto attempts_each = (*config.ops + config.clients - 1) / config.clients;
  return milliseconds{attempts_each * per_attempt.count()} + config.fault_allowance + 10s;
}

Result<WorkloadOutcome> run_workload(const WorkloadConfig& config, const SharedHistory& history,
                                            Nemesis& nemesis, NemesisContext& context,
                                            const std::function<void()>& at_barrier) {
  if (config.clients != history.clients())
    return Error{ErrorKind::usage, "history sized for a different number of clients"};
  return config.mode == ClientMode::process ? run_processes(config, history, nemesis, context, at_barrier)
                                            : run_threads(config, history, nemesis, context, at_barrier);
}

}  // namespace locklab::harness
