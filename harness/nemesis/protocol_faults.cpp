#include "nemesis/protocol_faults.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>

#include "history/history.h"
#include "nemesis/client_parking.h"
#include "nemesis/topology_fault.h"
#include "servers/lock_server_layout.h"
#include "servers/resp_watch.h"
#include "support/conditions.h"
#include "support/process_control.h"
#include "support/redis_probe.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

std::int64_t ns_of(std::chrono::steady_clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();  // monotonic_ns()'s clock
}

// Signal a client, and the programs it started (its adapter) when it leads a
// process group of its own. Returns kill()'s answer. In a cgroup of its own
// (support/client_cgroup.h) the whole cgroup, setsid children too: SIGSTOP
// freezes it, SIGCONT thaws it (and continues the group: a pause without a
// cgroup stopped it), SIGKILL kills every process in it.
int signal_client(pid_t pid, int signal) {
  if (pid <= 0) return -1;
  const auto cgroup = client_cgroup_of(pid);
  if (cgroup && signal == SIGSTOP) return cgroup->freeze() ? 0 : -1;
  const int sent = ::kill(::getpgid(pid) == pid ? -pid : pid, signal);
  if (!cgroup || sent != 0) return sent;
  if (signal == SIGCONT) return cgroup->thaw() ? 0 : -1;
  if (signal == SIGKILL && cgroup->kill_now()) return 0;
  for (const pid_t member : cgroup->pids()) ::kill(member, signal);
  return 0;
}

// True once `pid` died: a zombie the workload has not reaped yet, or gone.
bool process_dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  // "pid (comm) S ...": the state follows the last ')'.
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && (line[close + 2] == 'Z' || line[close + 2] == 'X');
}

// What to watch: the pattern of at=resp:PATTERN, whose requests, and from when (when=start|holder).
struct ProtocolWatch {
  RespPattern pattern;
  int client = -1;
  bool when_holder = false;
};

// What both faults share: arming the targeted clients' links, noticing a
// request that parked, releasing or dropping it, the record.
class ProtocolPointFault : public Fault {
 public:
  // `signal`: sent to the client by the proxy the moment its request parks.
  ProtocolPointFault(FaultSpec spec, std::string at, ProtocolWatch watch, int parks, int signal)
      : spec_(std::move(spec)),
        at_(std::move(at)),
        signal_(signal),
        client_(watch.client),
        when_holder_(watch.when_holder),
        pattern_(std::move(watch.pattern)),
        budget_(std::make_shared<std::atomic<int>>(parks)) {}

  FaultNeeds needs() const override {
    FaultNeeds needs;  // own_servers: the proxies stand in front of servers we start
    needs.client_proxies = true;
    needs.process_clients = true;
    return needs;
  }
  void before_run(NemesisContext& context) override;
  void holder_entered(NemesisContext& context, int client) override;
  void tick(NemesisContext& context) override;
  nlohmann::json record() const override { return {{"spec", spec_.text}, {"applied", applied_json(all_events(), go_ns_)}}; }
  std::string why_not_acted() const override;

 protected:
  // A request of `client` parked at `since_ns` (monotonic); `signalled`: the
  // proxy's signal reached it then. Act on it.
  virtual void parked(NemesisContext& context, int client, const std::string& request, std::int64_t since_ns,
                      bool signalled) = 0;
  virtual std::vector<AppliedEvent> more_events() const { return {}; }

  void release(int client);  // the client's held requests go on, in order
  void drop(int client);     // they are discarded and its links reset
  void disarm_all();         // every armed link passes again (after_run)
  void note(std::string what) { events_.push_back({monotonic_ns(), std::move(what)}); }
  void set_go(const NemesisContext& context) {
    if (context.history != nullptr) go_ns_ = context.history->header().go_ns.load();
  }
  static std::string client_text(int client) { return "client " + std::to_string(client); }

  static pid_t pid_of(const NemesisContext& context, int client) {
    const auto index = static_cast<std::size_t>(client);
    return index < context.client_pids.size() ? context.client_pids[index] : -1;
  }

  FaultSpec spec_;
  std::string at_;
  int signal_;
  int client_;

 private:
  struct Armed {
    int client = -1;
    std::shared_ptr<ParkGroup> group;
    std::vector<TcpProxy*> links;                // [j]: its link to lock server j
    std::shared_ptr<std::atomic<bool>> signalled;  // the proxy's signal reached the client
    bool seen = false;                           // its park was acted on
  };

  bool targets(int client) const { return client_ < 0 || client == client_; }
  void arm(NemesisContext& context, int client);
  std::vector<AppliedEvent> all_events() const;

  bool when_holder_;
  RespPattern pattern_;
  std::shared_ptr<std::atomic<int>> budget_;  // parks left to all groups together
  std::vector<Armed> armed_;
  std::vector<AppliedEvent> events_;
  std::int64_t go_ns_ = 0;
  bool any_parked_ = false;
};

void ProtocolPointFault::before_run(NemesisContext& context) {
  LockServerLayout* topology = context.topology;
  if (topology == nullptr || !topology->plan().client_proxies) return note("no client proxies: nothing armed");
  const std::string who = client_ < 0 ? std::string("every client") : client_text(client_);
  if (when_holder_) return note("watching " + who + "'s requests for " + at_ + " once it holds the lock");
  for (int c = 0; c < topology->plan().clients; ++c)
    if (targets(c)) arm(context, c);
  note("watching " + who + "'s requests for " + at_);
}

// when=holder: a client's links are armed once it first holds the lock, so a
// request its acquire sends (a Redlock's undo script) cannot match.
void ProtocolPointFault::holder_entered(NemesisContext& context, int client) {
  if (!when_holder_ || !targets(client) || context.topology == nullptr || !context.topology->plan().client_proxies) return;
  for (const Armed& armed : armed_)
    if (armed.client == client) return;
  arm(context, client);
  note(client_text(client) + " holds the lock: its links watched for " + at_);
}

// The client's links to every lock server, armed as one group. The proxy
// signals the client the moment its request parks: a coordinator's tick
// later, a client with a short request timeout (Redlock's per-node 5 ms)
// would already have given up on the reply and gone on.
void ProtocolPointFault::arm(NemesisContext& context, int client) {
  auto signalled = std::make_shared<std::atomic<bool>>(false);
  auto on_park = [pid = pid_of(context, client), signal = signal_, signalled] {
    signalled->store(signal_client(pid, signal) == 0);
  };
  Armed armed{client, std::make_shared<ParkGroup>(budget_, on_park), context.topology->client_links(client), signalled};
  for (std::size_t j = 0; j < armed.links.size(); ++j) armed.links[j]->arm_watch(pattern_, armed.group, j);
  armed_.push_back(std::move(armed));
}

void ProtocolPointFault::tick(NemesisContext& context) {
  for (Armed& armed : armed_) {
    if (armed.seen) continue;
    const auto arrival = armed.group->arrival();
    if (!arrival) continue;
    armed.seen = true;
    any_parked_ = true;
    const std::int64_t since = ns_of(arrival->at);
    events_.push_back({since, client_text(armed.client) + "'s " + arrival->command + " parked on its link to lock server " +
                                  std::to_string(arrival->member) + " (" + at_ + ")"});
    parked(context, armed.client, arrival->command, since, armed.signalled->load());
  }
}

void ProtocolPointFault::release(int client) {
  for (Armed& armed : armed_)
    if (armed.client == client)
      for (TcpProxy* link : armed.links) link->release_park();
}

void ProtocolPointFault::drop(int client) {
  for (Armed& armed : armed_)
    if (armed.client == client)
      for (TcpProxy* link : armed.links) link->drop_park();
}

void ProtocolPointFault::disarm_all() {
  for (Armed& armed : armed_)
    for (TcpProxy* link : armed.links) link->release_park();
}

std::vector<AppliedEvent> ProtocolPointFault::all_events() const {
  std::vector<AppliedEvent> all = events_;
  for (auto& event : more_events()) all.push_back(std::move(event));
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.ns < b.ns; });
  return all;
}

std::string ProtocolPointFault::why_not_acted() const {
  if (!any_parked_ && (!armed_.empty() || when_holder_))
    return nobody_did(client_, std::string("sent a request matching ") + at_ + (when_holder_ ? " while holding the lock" : ""));
  const auto all = all_events();
  return all.empty() ? "nothing was applied" : all.back().what;
}

// holder-pause:at=resp:PATTERN
class ProtocolPauseFault final : public ProtocolPointFault {
 public:
  ProtocolPauseFault(FaultSpec spec, std::string at, ProtocolWatch watch, PauseRule rule)
      : ProtocolPointFault(std::move(spec), at, std::move(watch), 1, SIGSTOP),
        parking_(std::make_shared<ClientParking>(std::vector<ClientParking::Rule>{{rule, std::move(at)}})) {
    parking_->before_continue([this](int stopped) { let_go(stopped, "its pause is over"); });
  }
  std::string name() const override { return "holder-pause"; }
  FaultNeeds needs() const override {
    FaultNeeds needs = ProtocolPointFault::needs();
    needs.lock_key = parking_->reads_lock_key();
    return needs;
  }
  void tick(NemesisContext& context) override {
    ProtocolPointFault::tick(context);
    parking_->tick(context);
  }
  void after_run(NemesisContext& context) override {
    ProtocolPointFault::tick(context);  // a park no tick saw yet (the run was cut short) is settled too
    parking_->resume_all(context);      // the request of a client still stopped goes on first
    disarm_all();
    set_go(context);
  }
  // A process was stopped with its request parked, and the pause counted (ClientParking::exercised()).
  bool acted() const override { return parking_->exercised() > 0; }
  Bite bite(const BiteEvidence& evidence) const override { return pause_bite(evidence, parking_->spans()); }
  std::chrono::milliseconds allowance(std::chrono::milliseconds ttl) const override {
    return parking_->longest_pause(ttl);
  }

 protected:
  // The proxy stopped it already; the parking confirms the stop and owns the
  // SIGCONT. The pause is counted from the arrival, as an in-process point
  // counts it from the client's parking.
  void parked(NemesisContext& context, int client, const std::string& request, std::int64_t since_ns,
              bool) override {
    requests_[client] = request;
    if (parking_->stop_waiting(context, client, 0, since_ns)) return;
    signal_client(pid_of(context, client), SIGCONT);  // whatever the proxy stopped goes on
    let_go(client, "it could not be stopped");
  }
  std::vector<AppliedEvent> more_events() const override { return parking_->events(); }

 private:
  void let_go(int client, const std::string& why) {
    release(client);
    note(client_text(client) + "'s parked " + requests_[client] + " let through: " + why);
  }

  std::shared_ptr<ClientParking> parking_;
  std::map<int, std::string> requests_;  // what each client has parked
};

// holder-crash:at=resp:PATTERN
class ProtocolCrashFault final : public ProtocolPointFault {
 public:
  ProtocolCrashFault(FaultSpec spec, std::string at, ProtocolWatch watch, int times)
      : ProtocolPointFault(std::move(spec), std::move(at), std::move(watch), times, SIGKILL) {}
  std::string name() const override { return "holder-crash"; }
  void after_run(NemesisContext& context) override {
    ProtocolPointFault::tick(context);  // a park no tick saw yet (the run was cut short) is settled too
    disarm_all();
    set_go(context);
  }
  bool acted() const override { return kills_ > 0; }  // a client was killed with its request parked
  // The first death that bites: inside its section, another client trying afterwards.
  Bite bite(const BiteEvidence& evidence) const override {
    Bite first{false, why_not_acted()};
    for (const auto& [client, died_ns, key_without_ttl] : deaths_) {
      Bite bite = crash_bite(evidence, client, died_ns, key_without_ttl);
      if (bite.bit) return bite;
      if (!first.bit && first.what == why_not_acted()) first = bite;
    }
    return first;
  }

 protected:
  // Killed first (by the proxy, as the request parked), dropped after: a
  // client that saw its connection reset while alive could send the request
  // again on a new one.
  void parked(NemesisContext& context, int client, const std::string& request, std::int64_t,
              bool signalled) override {
    const pid_t pid = pid_of(context, client);
    if (!signalled && signal_client(pid, SIGKILL) != 0) {
      drop(client);
      return note(client_text(client) + " could not be killed (gone already); its parked " + request + " dropped");
    }
    note(client_text(client) + ": SIGKILL (pid " + std::to_string(pid) + ") at " + at_);
    // The client and every member of its group (its adapter) are gone before
    // the request is dropped; a crash whose death was never seen did not act
    // (the run is error): a live client could send the request again on a new
    // connection. The request is dropped either way, never sent on.
    const bool dead = wait_until([pid] { return process_dead(pid) && client_members(pid).empty(); }, 2s, 1ms);
    drop(client);
    if (!dead)
      return note("its death not seen within 2 s: not counted as a crash; its parked " + request + " dropped");
    ++kills_;
    // Seen dead: from here on it cannot act, whenever the coordinator reaps it.
    if (context.history != nullptr) context.history->stamp_killed(client);
    deaths_.push_back({client, monotonic_ns(), key_left_without_ttl(context, client)});
    note(client_text(client) + " is dead; its parked " + request + " dropped, its links reset");
  }

 private:
  // A client that died between taking a key and giving it a TTL (SETNX>EXPIRE)
  // left it with none: read once its death was seen ("" none, or unreadable).
  static std::string key_left_without_ttl(const NemesisContext& context, int client) {
    for (const auto& endpoint : context.endpoints)
      if (auto probe = RedisProbe::connect(endpoint); probe && probe->pttl(lock_key_of(context, client)) == -1)
        return lock_key_of(context, client);
    return "";
  }

  struct Death {
    int client = -1;
    std::int64_t ns = 0;          // when its death was seen
    std::string key_without_ttl;  // "" none
  };
  int kills_ = 0;
  std::vector<Death> deaths_;
};

Result<ProtocolWatch> watch_of(const FaultSpec& spec, const FaultEnv& options, const std::string& at, int client) {
  if (auto servers = servers_to_act_on(spec, options); !servers) return servers.error();
  auto pattern = RespPattern::parse(std::string_view(at).substr(kProtocolPointPrefix.size()));
  if (!pattern) return fault_error(spec, "at=" + at + ": " + pattern.error().message);
  auto when = param_choice(spec, "when", "start", "start|holder");
  if (!when) return when.error();
  return ProtocolWatch{std::move(pattern).value(), client, *when == "holder"};
}

}  // namespace

bool is_protocol_point(std::string_view at) { return at.substr(0, kProtocolPointPrefix.size()) == kProtocolPointPrefix; }

Result<std::unique_ptr<Fault>> make_protocol_pause(const FaultSpec& spec, const FaultEnv& options,
                                                   const std::string& at, int client, PauseRule rule) {
  auto watch = watch_of(spec, options, at, client);
  if (!watch) return watch.error();
  return std::unique_ptr<Fault>(std::make_unique<ProtocolPauseFault>(spec, at, std::move(watch).value(), rule));
}

Result<std::unique_ptr<Fault>> make_protocol_crash(const FaultSpec& spec, const FaultEnv& options,
                                                   const std::string& at, int client, int times) {
  auto watch = watch_of(spec, options, at, client);
  if (!watch) return watch.error();
  return std::unique_ptr<Fault>(std::make_unique<ProtocolCrashFault>(spec, at, std::move(watch).value(), times));
}

}  // namespace locklab::harness
