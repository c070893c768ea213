// The clients of one run, started together and supervised (client_pools.h): the start
// sequence both modes share (coordinate), and the two pools that start, watch and reap them.
//
// Clients are separate processes by default (fork; each builds its own lock
// and connections after the fork, like the seeds' separate JVMs) or threads.
// A client process leads a process group of its own, with whatever its lock
// starts (an adapter, docs/adapters.md): the faults pause and kill the group,
// and the coordinator ends every client's group, confirmed from /proc, as it
// reaps the client, so no adapter outlives the run. Where the machine allows
// it, each client process also has a cgroup of its own (support/client_cgroup.h),
// and the faults and the coordinator act on the cgroup: a process of the
// adapter's that called setsid() is reached too.
// Everything they observe goes into a SharedHistory the coordinator created
// before forking. What one client does, in either mode, is client_loop.h's.
#include "workload/client_pools.h"

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
#include "workload/client_loop.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

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
      ClientLoop client(config_, history_, index, std::move(faults.hook), std::move(faults.clock));
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
        ClientLoop client(config_, history_, index, std::move(hook), std::move(clock));
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

}  // namespace

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

}  // namespace locklab::harness
