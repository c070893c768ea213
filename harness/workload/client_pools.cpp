#include "workload/workload.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "support/client_cgroup.h"
#include "support/process_control.h"
#include "resource/counter_resource.h"

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

 private:
  bool keep_going() {
    if (history_.header().stop.load(std::memory_order_relaxed) != 0) return false;
    if (config_.ops) return history_.header().ops_claimed.fetch_add(1) < *config_.ops;
    return true;
  }

  // A lock that broke (an adapter that misbehaved) answers every later call
  // with the same error: the client stops and says why (its exit status makes
  // it a failed client).
  bool lock_broke() const { return !lock_->broken().empty(); }

  // Ends what the lock runs beside this process (an adapter: its stdin closed,
  // then reaped) here, not by the kernel after our _exit; 1 when it broke
  // during the run.
  // An adapter that exited mid-run is a crash of this client (the service it stands for
  // died; its hold stays until the TTL), with the line it died on; one that misbehaved is a
  // failure (docs/adapters.md, "An adapter that dies").
  int end_lock() {
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

  void loop() {
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
  void crash_if_adapter_died() {
    if (lock_->died_now()) crash_with_adapter();
  }
  [[noreturn]] void crash_with_adapter() {
    history_.set_error(index_, lock_->died());
    stamp_own_death();
    exit_with_group(kAdapterDiedExitCode);
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
// (that would SIGKILL the servers) and must die with the parent. It leads a
// process group of its own: its adapter joins it, and faults act on both. In
// a cgroup of its own where the machine has one (support/client_cgroup.h).
void become_client_process(pid_t parent, const ClientCgroup* cgroup) {
  // First of all, before it can start anything: whatever it starts is born in
  // its cgroup. The coordinator moves it too, so a fault that comes before
  // this line ran finds it there.
  if (cgroup != nullptr && !cgroup->join(0)) ::_exit(1);
  // Without a cgroup, an orphan of its tree (a grandchild whose parent exited)
  // stays in its tree, where the adapter's check (adapter_lock.h) sees it.
  if (cgroup == nullptr) ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ::setpgid(0, 0);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
}

// In a client process: the nemesis's "NAME=VALUE" variables, for the programs
// it starts (its adapter). LD_PRELOAD keeps what was there, after ours.
void set_environment(const std::vector<std::string>& variables) {
  for (const auto& variable : variables) {
    const auto eq = variable.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = variable.substr(0, eq);
    std::string value = variable.substr(eq + 1);
    const char* before = std::getenv(name.c_str());
    if (name == "LD_PRELOAD" && before != nullptr && *before != '\0') value += std::string(" ") + before;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
}

// What the nemesis gives one client: its step hook, its wall clock, and the
// environment of its process.
struct ClientFaults {
  StepHook hook;
  std::shared_ptr<const WallClock> clock;
  std::vector<std::string> environment;
};

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

// How one client mode starts, watches and ends its clients; coordinate()
// runs the sequence around them, the same for processes and threads.
class ClientPool {
 public:
  virtual ~ClientPool() = default;
  // Starts client `index` with what the nemesis gives it (taken in the
  // coordinator, in client order). An error means no client may be left running.
  virtual Status start(int index, ClientFaults faults) = 0;
  virtual void all_started() {}
  // Polls the clients: true once every one is gone.
  virtual bool finished() = 0;
  // Setup failed; stop and go are set, so the waiting clients leave.
  virtual void abandon() = 0;
  // The hard deadline ran out (supervise()).
  virtual void overran() = 0;
  virtual void about_to_go() {}
  // After the run: waits for every client and fills in its part of the outcome.
  virtual void wait_all() = 0;
};

// The start sequence of both modes: every client started, the start barrier,
// the coordinator's watch, the end.
Result<WorkloadOutcome> coordinate(const WorkloadConfig& config, const SharedHistory& history, Nemesis& nemesis,
                                   NemesisContext& context, const std::function<void()>& at_barrier, ClientPool& pool,
                                   WorkloadOutcome& out) {
  for (int i = 0; i < config.clients; ++i) {
    ClientFaults faults{nemesis.client_step_hook(i), nemesis.client_clock(i), nemesis.client_environment(i)};
    if (auto started = pool.start(i, std::move(faults)); !started) return started.error();
  }
  pool.all_started();
  if (auto ready = await_setup(config, history, [&] { return pool.finished(); }); !ready) {
    history.header().stop.store(1);
    history.header().go.store(1);  // let the waiting ones leave
    pool.abandon();
    return ready.error();
  }
  if (at_barrier) at_barrier();
  nemesis.before_run(context);
  context.started = Clock::now();
  pool.about_to_go();
  out.go_ns = monotonic_ns();
  history.header().go_ns.store(out.go_ns);
  history.header().go.store(1);
  supervise(config, history, nemesis, context, [&] { return pool.finished(); }, [&] { pool.overran(); });
  pool.wait_all();
  out.end_ns = last_finish(history, monotonic_ns());
  nemesis.after_run(context);
  return out;
}

// One forked process per client; reaped as they exit.
class ProcessPool final : public ClientPool {
 public:
  ProcessPool(const WorkloadConfig& config, const SharedHistory& history, NemesisContext& context,
              WorkloadOutcome& out)
      : config_(config), history_(history), context_(context), out_(out), parent_(::getpid()) {
    std::fflush(stdout);
    std::fflush(stderr);
    // An adapter whose client died before it (SIGKILL, a hard deadline) is
    // re-parented to us, not to an init that may never reap it: kill_group()
    // reaps it as a member of its client's group.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    out_.isolation_kind = isolation_name(cgroups_.kind());
    out_.isolation_why = cgroups_.why();
  }
  // Only for this run: a matrix sweep or a test binary lives on, and an orphan
  // of anything else must not become its unreaped zombie.
  ~ProcessPool() override { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }

  Status start(int index, ClientFaults faults) override {
    std::optional<ClientCgroup> cgroup;
    if (cgroups_.kind() != CgroupKind::none) {
      auto made = cgroups_.client(index);
      if (!made) return stop_all_with("client " + std::to_string(index) + ": " + made.error().message);
      cgroup = std::move(made).value();
    }
    const pid_t pid = ::fork();
    if (pid < 0) return stop_all_with(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) client_body(index, std::move(faults), cgroup ? &*cgroup : nullptr);
    if (cgroup) (void)cgroup->join(pid);  // as the child does itself (it may have, or have exited: no matter)
    ::setpgid(pid, pid);  // as the child does itself: a fault may act on its group before it ran
    running_.push_back(pid);
    return Done{};
  }

  void all_started() override {
    out_.pids = running_;
    context_.client_pids = running_;
    reaped_.assign(running_.size(), false);
  }

  bool finished() override {
    bool all = true;
    for (std::size_t i = 0; i < running_.size(); ++i) {
      if (reaped_[i]) continue;
      if (!exited(running_[i])) {
        all = false;
        continue;
      }
      // The crash's time is when it exited, not when its group is confirmed
      // gone: ending a group with an adapter in it can take a while on a loaded
      // machine, and that must not shorten the unavailability it left behind.
      const std::int64_t exited_ns = monotonic_ns();
      const auto status = end_client(running_[i]);
      reaped_[i] = true;
      gone(static_cast<int>(i));
      count_exit(static_cast<int>(i), status, exited_ns);
    }
    return all;
  }

  void abandon() override {
    const auto deadline = Clock::now() + 5s;
    while (!finished() && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
    kill_all();
  }

  // Past the deadline (e.g. a client left SIGSTOPped at a step point) kill_all() counts the killed.
  void overran() override { kill_all(); }

  void wait_all() override {
    while (!finished()) std::this_thread::sleep_for(1ms);
  }

 private:
  Error stop_all_with(const std::string& why) {
    for (pid_t child : running_) end_client(child);
    return Error{ErrorKind::io, why};
  }

  // In the child. Never the parent's atexit handlers or destructors (they
  // would stop the coordinator's redis-servers): every way out of a client is _exit.
  [[noreturn]] void client_body(int index, ClientFaults faults, const ClientCgroup* cgroup) {
    become_client_process(parent_, cgroup);
    history_.become_own(index);  // a crash at a step point stamps its own death here
    set_environment(faults.environment);
    try {
      Client client(config_, history_, index, std::move(faults.hook), std::move(faults.clock));
      ::_exit(client.run(/*report_traffic=*/true));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "locklab: client %d: %s\n", index, e.what());
    } catch (...) {
      std::fprintf(stderr, "locklab: client %d: unknown exception\n", index);
    }
    ::_exit(1);
  }

  // The oracle's section ends first, so the history's (closed by
  // forget_dead) still covers it.
  void gone(int client) {
    client_left_oracle(config_, history_, client);
    history_.forget_dead(client);
  }

  // The client has exited (or died) and is not reaped yet: its group id stays
  // its own until we reap it, so the group can still be ended safely.
  static bool exited(pid_t pid) {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
  }

  // What ended a client: its wait status, and whether every other member of
  // its process group (its adapter) is gone too.
  struct Ended {
    int status = 0;
    bool group_gone = true;
  };

  // SIGKILLs the client's whole cgroup (when it has one) and group, confirms
  // that nobody in them lives on, then reaps the client itself.
  static Ended end_client(pid_t pid) {
    Ended ended;
    // The cgroup first (before the reap: a reaped pid is in no cgroup): a
    // process frozen by the v1 freezer dies only once thawed, which kill_all does.
    if (const auto cgroup = client_cgroup_of(pid)) ended.group_gone = cgroup->kill_all(std::chrono::milliseconds{2000}, pid);
    ended.group_gone = kill_group(pid) && ended.group_gone;
    while (::waitpid(pid, &ended.status, 0) < 0 && errno == EINTR) {
    }
    return ended;
  }

  void count_exit(int client, const Ended& ended, std::int64_t exited_ns) {
    const int status = ended.status;
    const bool adapter_died = WIFEXITED(status) && WEXITSTATUS(status) == kAdapterDiedExitCode;
    const bool crashed = (WIFEXITED(status) && WEXITSTATUS(status) == kCrashExitCode) || WIFSIGNALED(status) || adapter_died;
    if (crashed) {
      ++out_.crashed_clients;
      out_.crashed_ns.push_back(exited_ns);
      if (adapter_died) out_.adapter_deaths.push_back(history_.slot(client).last_error);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++out_.failed_clients;  // it threw or gave up: a client that vanished silently must not read as safe
      const char* why = history_.slot(client).last_error;
      if (why[0] != '\0') out_.failures.push_back("client " + std::to_string(client) + ": " + why);
    }
    if (!ended.group_gone) {
      ++out_.failed_clients;
      out_.failures.push_back("client " + std::to_string(client) + ": a process of its group outlived SIGKILL");
    }
  }

  void kill_all() {
    for (std::size_t i = 0; i < running_.size(); ++i)
      if (!reaped_[i]) {
        const auto ended = end_client(running_[i]);
        gone(static_cast<int>(i));
        reaped_[i] = true;
        ++out_.killed_clients;
        if (!ended.group_gone) out_.failures.push_back("client " + std::to_string(i) + ": a process of its group outlived SIGKILL");
      }
  }

  // First: destroyed last, after every client is reaped (it kills what is left and removes the cgroups).
  CgroupRun cgroups_ = CgroupRun::create();
  const WorkloadConfig& config_;
  const SharedHistory& history_;
  NemesisContext& context_;
  WorkloadOutcome& out_;
  const pid_t parent_;
  std::vector<pid_t> running_;
  std::vector<bool> reaped_;
};

// One thread per client, in this process.
class ThreadPool final : public ClientPool {
 public:
  ThreadPool(const WorkloadConfig& config, const SharedHistory& history, WorkloadOutcome& out)
      : config_(config), history_(history), out_(out) {
    out_.isolation_why = "thread mode: every client is a thread of this process";
    threads_.reserve(static_cast<std::size_t>(config.clients));
  }

  // The nemesis's environment variables are for a client's own process: a
  // thread has none (and an adapter, which would inherit them, needs a process).
  Status start(int index, ClientFaults faults) override {
    threads_.emplace_back([this, index, hook = std::move(faults.hook), clock = std::move(faults.clock)]() mutable {
      try {
        Client client(config_, history_, index, std::move(hook), std::move(clock));
        if (client.run(/*report_traffic=*/false) != 0) failed_.fetch_add(1);  // traffic is process-wide: measured below
      } catch (const std::exception& e) {
        std::fprintf(stderr, "locklab: client %d: %s\n", index, e.what());
        failed_.fetch_add(1);  // the thread is gone: its share of the run is missing
      }
      done_.fetch_add(1);
    });
    return Done{};
  }

  bool finished() override { return done_.load() == config_.clients; }
  void abandon() override { join_all(); }
  // Threads cannot be killed one by one: past the hard deadline we only stop
  // handing out work and wait (each try_acquire is bounded by --wait). The
  // threads still running then count as killed: the run overran, its verdict is error.
  void overran() override { out_.killed_clients = config_.clients - done_.load(); }
  void about_to_go() override { before_ = redis::traffic(); }

  void wait_all() override {
    join_all();
    out_.failed_clients = failed_.load();
    const redis::Traffic after = redis::traffic();
    out_.thread_traffic = {after.commands - before_.commands, after.round_trips - before_.round_trips};
  }

 private:
  void join_all() {
    for (auto& thread : threads_) thread.join();
  }

  const WorkloadConfig& config_;
  const SharedHistory& history_;
  WorkloadOutcome& out_;
  std::vector<std::thread> threads_;
  std::atomic<int> done_{0};
  std::atomic<int> failed_{0};
  redis::Traffic before_{};
};

Result<WorkloadOutcome> run_processes(const WorkloadConfig& config, const SharedHistory& history,
                                      Nemesis& nemesis, NemesisContext& context,
                                      const std::function<void()>& at_barrier) {
  WorkloadOutcome out;
  ProcessPool pool(config, history, context, out);
  return coordinate(config, history, nemesis, context, at_barrier, pool, out);
}

Result<WorkloadOutcome> run_threads(const WorkloadConfig& config, const SharedHistory& history,
                                    Nemesis& nemesis, NemesisContext& context,
                                    const std::function<void()>& at_barrier) {
  WorkloadOutcome out;
  ThreadPool pool(config, history, out);
  return coordinate(config, history, nemesis, context, at_barrier, pool, out);
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
