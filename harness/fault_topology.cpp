#include "fault_topology.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "clock_jump.h"
#include "conditions.h"
#include "fault_process.h"
#include "history.h"
#include "process_control.h"
#include "registry.h"
#include "topology.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr long long kMaxMs = 86'400'000;
// A client parked at a gate never waits longer than this, whatever the coordinator does.
constexpr auto kGateLimit = 120s;
// The value that keeps a node away from the holder ("it answered the holder too late").
constexpr const char* kBlocker = "locklab:not-for-the-holder";

// A client that reaches `point` (the first one, or only `client`) waits there,
// alive -- a watchdog keeps running -- until the coordinator lets it go. One
// shot: once a client parked, the gate lets every later one through. The cells
// live in memory shared across fork(), so a client process parks and the
// coordinator sees it.
class Gate {
 public:
  Gate(std::string point, int client)
      : point_(std::move(point)), client_(client), cells_(std::make_shared<SharedCells>(4)) {}

  StepHook hook(int client) const {
    if (client_ >= 0 && client != client_) return {};
    return [cells = cells_, point = point_, client](std::string_view at) {
      SharedCells& c = *cells;
      if (at != point || c[kArmed].load() == 0 || c[kSkip].load() == client + 1) return;
      std::int64_t nobody = 0;
      if (!c[kParked].compare_exchange_strong(nobody, client + 1)) return;
      const auto limit = Clock::now() + kGateLimit;
      while (c[kReleased].load() == 0 && Clock::now() < limit) std::this_thread::sleep_for(200us);
    };
  }

  void arm(int skip_client = -1) {
    (*cells_)[kSkip].store(skip_client + 1);
    (*cells_)[kArmed].store(1);
  }
  int parked() const { return static_cast<int>((*cells_)[kParked].load()) - 1; }
  bool released() const { return (*cells_)[kReleased].load() != 0; }
  void release() {
    (*cells_)[kArmed].store(0);
    (*cells_)[kReleased].store(1);
  }

 private:
  enum Cell : std::size_t { kArmed = 0, kParked = 1, kReleased = 2, kSkip = 3 };
  std::string point_;
  int client_;
  std::shared_ptr<SharedCells> cells_;
};

// Acquisitions by every client but `except`, so far.
std::int64_t acquisitions_by_others(const NemesisContext& context, int except) {
  if (context.history == nullptr) return 0;
  std::int64_t total = 0;
  for (int i = 0; i < context.history->clients(); ++i)
    if (i != except) total += context.history->slot(i).acquired.load();
  return total;
}

// Failed attempts of one client (-1: of all): errors and unknown outcomes.
std::int64_t failed_attempts(const NemesisContext& context, int client) {
  if (context.history == nullptr) return 0;
  std::int64_t total = 0;
  for (int i = 0; i < context.history->clients(); ++i)
    if (client < 0 || i == client) total += context.history->slot(i).errors.load() + context.history->slot(i).unknown.load();
  return total;
}

// "0,2,3": appended one number at a time (GCC 12 warns falsely on "," + std::string).
void append_node(std::string& list, std::size_t node) {
  if (!list.empty()) list.push_back(',');
  list.append(std::to_string(node));
}

std::string ms_text(milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

// What every topology fault shares: its spec, its record, the topology.
class TopologyFault : public Fault {
 public:
  explicit TopologyFault(FaultSpec spec) : spec_(std::move(spec)) {}
  std::string name() const override { return spec_.name; }
  nlohmann::json record() const override { return {{"spec", spec_.text}, {"applied", applied_json(events_, go_ns_)}}; }

 protected:
  void note(const NemesisContext& context, std::string what) {
    if (context.history != nullptr) go_ns_ = context.history->header().go_ns.load();
    events_.push_back({monotonic_ns(), std::move(what)});
  }
  static Topology* topology(const NemesisContext& context) { return context.topology; }

  FaultSpec spec_;

 private:
  std::vector<AppliedEvent> events_;
  std::int64_t go_ns_ = 0;
};

// Keep the holder off some nodes: before the run, nodes [from, N) carry a key
// of nobody's, so the first holder reaches only nodes [0, from) -- a bare
// majority when from = N/2 + 1 ("the other nodes answered it too late"). Once
// the fault has acted, the blockers go and a contender may use those nodes.
class Blockers {
 public:
  explicit Blockers(std::size_t from) : from_(from) {}
  bool any(std::size_t nodes) const { return from_ < nodes; }
  void place(const NemesisContext& context) { set(context, true); }
  void lift(const NemesisContext& context) { set(context, false); }
  bool blocked(std::size_t node) const { return node >= from_; }

 private:
  void set(const NemesisContext& context, bool on) {
    if (placed_ == on) return;
    placed_ = on;
    for (std::size_t j = from_; j < context.endpoints.size(); ++j) {
      auto connection = redis::Connection::connect(context.endpoints[j]);
      if (!connection) continue;
      if (on)
        (void)connection->command({"SET", context.key, kBlocker});
      else
        (void)connection->command({"EVAL", "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
                                   "1", context.key, kBlocker});
    }
  }
  std::size_t from_;
  bool placed_ = false;
};

// Lock servers where the holder's key is (present and not a blocker), in node order.
std::vector<std::size_t> holder_nodes(const NemesisContext& context) {
  std::vector<std::size_t> nodes;
  for (std::size_t j = 0; j < context.endpoints.size(); ++j) {
    auto connection = redis::Connection::connect(context.endpoints[j]);
    if (!connection) continue;
    auto value = connection->command({"GET", context.key});
    if (value && value->is_string() && std::string(value->text()) != kBlocker) nodes.push_back(j);
  }
  return nodes;
}

// How long a parked holder may wait for a contender: less than its own lease,
// so what shows is the fault's doing, not a pause longer than the TTL.
milliseconds short_patience(milliseconds ttl) { return std::max(ttl / 2, 50ms); }
// Long enough for the holder's key to expire and a contender to take it.
milliseconds long_patience(milliseconds ttl) { return 3 * ttl + 2000ms; }

// ---- failover -------------------------------------------------------------------

class FailoverFault final : public TopologyFault {
 public:
  FailoverFault(FaultSpec spec, bool guarded, milliseconds ttl)
      : TopologyFault(std::move(spec)), guarded_(guarded), ttl_(ttl), gate_(std::string(kCsEnter), -1) {}

  FaultNeeds needs() const override {
    FaultNeeds needs;
    needs.replica_via_proxy = true;
    return needs;
  }
  milliseconds allowance(milliseconds ttl) const override { return long_patience(ttl); }
  StepHook client_step_hook(int client) override { return gate_.hook(client); }

  void before_run(NemesisContext& context) override {
    Topology* t = topology(context);
    if (t == nullptr || t->replication() == nullptr) return note(context, "no replica to fail over to: nothing done");
    t->replication()->hold_replication();
    note(context, "replication held: the replica receives nothing the master acknowledges");
    gate_.arm();
  }

  void tick(NemesisContext& context) override {
    Topology* t = topology(context);
    if (t == nullptr || t->replication() == nullptr || finished_) return;
    const int holder = gate_.parked();
    if (guarded_ && !resumed_ && holder < 0 && failed_attempts(context, -1) > 0) {
      t->replication()->resume_replication();
      resumed_ = true;
      note(context, "an acquire was refused: the WAIT guard saw no replica acknowledge it; replication resumed");
    }
    if (holder < 0) return;
    if (!failed_over_) {
      const auto held = t->replication()->held_bytes();
      failed_over_ = true;
      since_ = Clock::now();
      others_before_ = acquisitions_by_others(context, holder);
      auto promoted = t->fail_over();
      if (!promoted) {
        note(context, "failover failed: " + promoted.error().message);
        return finish();
      }
      note(context, "client " + std::to_string(holder) + " holds the lock; master killed with " + std::to_string(held) +
                        " replication bytes held, replica promoted, clients redirected to " + promoted->to_string());
      return;
    }
    if (acquisitions_by_others(context, holder) > others_before_) {
      note(context, "another client acquired on the promoted replica while client " + std::to_string(holder) +
                        " still holds: two holders");
      finish();
    } else if (Clock::now() - since_ > short_patience(ttl_)) {
      note(context, "no other client acquired within " + ms_text(short_patience(ttl_)) + " of the failover");
      finish();
    }
  }

  void after_run(NemesisContext& context) override {
    gate_.release();
    Topology* t = topology(context);
    if (t != nullptr && t->replication() != nullptr && !failed_over_) t->replication()->resume_replication();
  }

 private:
  void finish() {
    finished_ = true;
    gate_.release();
  }

  bool guarded_;
  milliseconds ttl_;
  Gate gate_;
  bool resumed_ = false;
  bool failed_over_ = false;
  bool finished_ = false;
  Clock::time_point since_{};
  std::int64_t others_before_ = 0;
};

// ---- node-crash -------------------------------------------------------------------

enum class Restart { never, now, after_ttl };

class NodeCrashFault final : public TopologyFault {
 public:
  NodeCrashFault(FaultSpec spec, std::size_t nodes, Restart restart, bool at_start, std::size_t holder_nodes,
                 milliseconds ttl)
      : TopologyFault(std::move(spec)),
        count_(nodes),
        restart_(restart),
        at_start_(at_start),
        blockers_(holder_nodes),
        ttl_(ttl),
        gate_(std::string(kCsEnter), -1) {}

  milliseconds allowance(milliseconds ttl) const override { return long_patience(ttl); }
  StepHook client_step_hook(int client) override { return at_start_ ? StepHook{} : gate_.hook(client); }

  void before_run(NemesisContext& context) override {
    if (topology(context) == nullptr) return note(context, "no topology: nothing done");
    if (at_start_) {
      std::vector<std::size_t> first;
      for (std::size_t j = 0; j < count_; ++j) first.push_back(j);
      return crash(context, first);
    }
    if (blockers_.any(context.endpoints.size())) {
      blockers_.place(context);
      note(context, "the first holder can reach only the nodes before the blocked ones");
    }
    gate_.arm();
  }

  void tick(NemesisContext& context) override {
    if (restart_ == Restart::after_ttl && !crashed_.empty() && Clock::now() - crashed_at_ >= ttl_ + ttl_ / 5)
      restart_crashed(context, "restarted empty after " + ms_text(ttl_ + ttl_ / 5) + " (> ttl)");
    const int holder = gate_.parked();
    if (at_start_ || holder < 0 || gate_.released()) return;
    if (!acted_) {
      acted_ = true;
      std::vector<std::size_t> victims = holder_nodes(context);
      for (std::size_t j = 0; j < context.endpoints.size(); ++j)
        if (std::find(victims.begin(), victims.end(), j) == victims.end()) victims.push_back(j);  // then the others
      victims.resize(std::min(victims.size(), count_));
      others_before_ = acquisitions_by_others(context, holder);
      crash(context, victims);
      blockers_.lift(context);
      since_ = Clock::now();
      if (restart_ != Restart::now) gate_.release();  // the story does not need the holder inside any longer
      return;
    }
    if (acquisitions_by_others(context, holder) > others_before_) {
      note(context, "another client acquired while client " + std::to_string(holder) + " still holds");
      gate_.release();
    } else if (Clock::now() - since_ > short_patience(ttl_)) {
      note(context, "no other client acquired within " + ms_text(short_patience(ttl_)));
      gate_.release();
    }
  }

  void after_run(NemesisContext& context) override {
    gate_.release();
    blockers_.lift(context);
    if (!crashed_.empty()) restart_crashed(context, "restarted at the end of the run");
  }

 private:
  void crash(NemesisContext& context, const std::vector<std::size_t>& nodes) {
    Topology* t = topology(context);
    std::string which;
    for (std::size_t j : nodes) {
      t->server(j).crash();
      crashed_.push_back(j);
      append_node(which, j);
    }
    crashed_at_ = Clock::now();
    note(context, "SIGKILL node(s) " + which);
    if (restart_ == Restart::now) restart_crashed(context, "restarted at once, empty (no persistence)");
  }

  void restart_crashed(NemesisContext& context, const std::string& how) {
    Topology* t = topology(context);
    std::string which, failed;
    for (std::size_t j : crashed_) {
      append_node(which, j);
      if (auto ok = t->server(j).restart(); !ok) failed += " node " + std::to_string(j) + ": " + ok.error().message;
    }
    crashed_.clear();
    note(context, "node(s) " + which + " " + how + (failed.empty() ? "" : "; restart failed:" + failed));
  }

  std::size_t count_;
  Restart restart_;
  bool at_start_;
  Blockers blockers_;
  milliseconds ttl_;
  Gate gate_;
  bool acted_ = false;
  std::vector<std::size_t> crashed_;
  Clock::time_point crashed_at_{};
  Clock::time_point since_{};
  std::int64_t others_before_ = 0;
};

// ---- node-pause ---------------------------------------------------------------------

class NodePauseFault final : public TopologyFault {
 public:
  NodePauseFault(FaultSpec spec, std::size_t nodes, milliseconds ms)
      : TopologyFault(std::move(spec)), count_(nodes), ms_(ms) {}

  milliseconds allowance(milliseconds) const override { return ms_; }

  void before_run(NemesisContext& context) override {
    Topology* t = topology(context);
    if (t == nullptr) return note(context, "no topology: nothing done");
    std::string which;
    for (std::size_t j = 0; j < count_; ++j) {
      auto paused = PausedProcess::pause(t->server(j).pid());
      if (!paused) {
        note(context, "cannot SIGSTOP node " + std::to_string(j) + ": " + paused.error().message);
        continue;
      }
      paused_.push_back(std::move(paused).value());
      append_node(which, j);
    }
    since_ = Clock::now();
    note(context, "SIGSTOP node(s) " + which + (ms_.count() > 0 ? " for " + ms_text(ms_) : " until the end"));
  }

  void tick(NemesisContext& context) override {
    if (ms_.count() > 0 && !paused_.empty() && Clock::now() - since_ >= ms_) resume(context, "SIGCONT after " + ms_text(ms_));
  }
  void after_run(NemesisContext& context) override {
    if (!paused_.empty()) resume(context, "SIGCONT at the end of the run");
  }

 private:
  void resume(NemesisContext& context, const std::string& how) {
    for (auto& paused : paused_) paused.resume();
    paused_.clear();
    note(context, how);
  }

  std::size_t count_;
  milliseconds ms_;
  std::vector<PausedProcess> paused_;
  Clock::time_point since_{};
};

// ---- clock-jump -----------------------------------------------------------------------

class ClockJumpFault final : public TopologyFault {
 public:
  ClockJumpFault(FaultSpec spec, std::size_t node, milliseconds offset, std::size_t holder_nodes, milliseconds ttl)
      : TopologyFault(std::move(spec)),
        node_(node),
        offset_(offset),
        blockers_(holder_nodes),
        ttl_(ttl),
        gate_(std::string(kCsEnter), -1) {}

  FaultNeeds needs() const override {
    FaultNeeds needs;
    needs.clock_shim = true;
    return needs;
  }
  milliseconds allowance(milliseconds ttl) const override { return long_patience(ttl); }
  StepHook client_step_hook(int client) override { return gate_.hook(client); }

  void before_run(NemesisContext& context) override {
    if (topology(context) == nullptr) return note(context, "no topology: nothing done");
    if (blockers_.any(context.endpoints.size())) {
      blockers_.place(context);
      note(context, "the first holder can reach only the nodes before the blocked ones");
    }
    gate_.arm();
  }

  void tick(NemesisContext& context) override {
    const int holder = gate_.parked();
    if (holder < 0 || gate_.released()) return;
    if (!jumped_) {
      jumped_ = true;
      const auto held = holder_nodes(context);
      const bool in_majority = std::find(held.begin(), held.end(), node_) != held.end();
      others_before_ = acquisitions_by_others(context, holder);
      auto jumped = jump_clock(topology(context)->server(node_), offset_);
      note(context, jumped ? "node " + std::to_string(node_) + "'s wall clock jumped by " + ms_text(offset_) + " (" +
                                 (in_majority ? "in" : "not in") + " client " + std::to_string(holder) + "'s majority)"
                           : "clock jump failed: " + jumped.error().message);
      blockers_.lift(context);
      since_ = Clock::now();
      return;
    }
    if (acquisitions_by_others(context, holder) > others_before_) {
      note(context, "another client acquired while client " + std::to_string(holder) + " still holds");
      gate_.release();
    } else if (Clock::now() - since_ > short_patience(ttl_)) {
      note(context, "no other client acquired within " + ms_text(short_patience(ttl_)));
      gate_.release();
    }
  }

  void after_run(NemesisContext& context) override {
    gate_.release();
    blockers_.lift(context);
    if (jumped_ && topology(context) != nullptr) {
      (void)jump_clock(topology(context)->server(node_), 0ms);
      note(context, "node " + std::to_string(node_) + "'s clock set back to real time");
    }
  }

 private:
  std::size_t node_;
  milliseconds offset_;
  Blockers blockers_;
  milliseconds ttl_;
  Gate gate_;
  bool jumped_ = false;
  Clock::time_point since_{};
  std::int64_t others_before_ = 0;
};

// ---- net ------------------------------------------------------------------------------

enum class NetMode { cut, delay, hold, drop };
enum class Phase { acquire, held, release };

Direction direction_of(const std::string& dir) {
  return dir == "up" ? Direction::client_to_server : dir == "down" ? Direction::server_to_client : Direction::both;
}

void apply_mode(const std::vector<TcpProxy*>& links, NetMode mode, milliseconds ms, Direction direction) {
  for (TcpProxy* link : links) switch (mode) {
      case NetMode::cut: link->cut(); break;
      case NetMode::delay: link->delay(ms, direction); break;
      case NetMode::hold: link->hold(direction); break;
      case NetMode::drop: link->drop(direction); break;
    }
}

void restore(const std::vector<TcpProxy*>& links) {
  for (TcpProxy* link : links) {
    link->pass();
    link->heal();
  }
}

std::uint64_t held_requests(const std::vector<TcpProxy*>& links) {
  std::uint64_t bytes = 0;
  for (TcpProxy* link : links) bytes += link->counters(Direction::client_to_server).buffered;
  return bytes;
}

class NetFault final : public TopologyFault {
 public:
  NetFault(FaultSpec spec, NetMode mode, milliseconds ms, Direction direction, int client, Phase phase,
           std::string point, milliseconds ttl)
      : TopologyFault(std::move(spec)),
        mode_(mode),
        ms_(ms),
        direction_(direction),
        client_(client),
        phase_(phase),
        ttl_(ttl),
        gate_(phase == Phase::release ? std::move(point) : std::string(kCsEnter), client),
        contender_(std::string(kCsEnter), -1) {}

  FaultNeeds needs() const override {
    FaultNeeds needs;
    needs.client_proxies = true;
    return needs;
  }
  milliseconds allowance(milliseconds ttl) const override { return 2 * long_patience(ttl) + ms_; }
  StepHook client_step_hook(int client) override {
    StepHook mine = gate_.hook(client), theirs = contender_.hook(client);
    if (!mine) return theirs;
    return [mine, theirs](std::string_view point) {
      mine(point);
      theirs(point);
    };
  }

  void before_run(NemesisContext& context) override {
    if (topology(context) == nullptr) return note(context, "no topology: nothing done");
    if (phase_ == Phase::acquire) {
      links_ = topology(context)->client_links(client_);
      apply_mode(links_, mode_, ms_, direction_);
      applied_ = true;
      note(context, what() + " on client " + std::to_string(client_) + "'s links while it acquires");
      hold_the_others(context);
    }
    gate_.arm();
  }

  void tick(NemesisContext& context) override {
    if (done_ || topology(context) == nullptr) return;
    if (!others_.empty()) let_the_others_go_once_first(context);
    const int holder = gate_.parked();
    if (holder < 0) return;
    switch (phase_) {
      case Phase::acquire: return tick_acquire(context, holder);
      case Phase::held: return tick_held(context, holder);
      case Phase::release: return tick_release(context, holder);
    }
  }

  void after_run(NemesisContext& context) override {
    gate_.release();
    contender_.release();
    restore(others_);
    others_.clear();
    if (applied_) {
      restore(links_);
      note(context, "links restored at the end of the run");
    }
  }

 private:
  std::string what() const {
    switch (mode_) {
      case NetMode::cut: return "cut";
      case NetMode::delay: return "delay " + ms_text(ms_);
      case NetMode::hold: return "hold";
      case NetMode::drop: return "drop";
    }
    return "?";
  }

  // at=acquire: client N's request must be the one that takes the lock (a
  // late "OK" is the story), so the other clients' requests wait in their
  // links until the key is on every lock server -- or client N's attempt
  // ended, or a TTL passed.
  void hold_the_others(NemesisContext& context) {
    for (int i = 0; context.history != nullptr && i < context.history->clients(); ++i)
      if (i != client_)
        for (TcpProxy* link : topology(context)->client_links(i)) others_.push_back(link);
    for (TcpProxy* link : others_) link->hold(Direction::client_to_server);
    for (const auto& endpoint : context.endpoints)
      if (auto probe = RedisProbe::connect(endpoint)) probes_.push_back(std::move(probe).value());
    since_ = Clock::now();
    attempts_before_ = context.history != nullptr ? context.history->slot(client_).attempts.load() : 0;
  }

  void let_the_others_go_once_first(NemesisContext& context) {
    const bool everywhere = !probes_.empty() && std::all_of(probes_.begin(), probes_.end(), [&](RedisProbe& probe) {
      return probe.exists(context.key).value_or(false);
    });
    const bool attempt_over =
        context.history != nullptr && context.history->slot(client_).attempts.load() > attempts_before_;
    if (!everywhere && !attempt_over && Clock::now() - since_ < ttl_) return;
    restore(others_);
    others_.clear();
    probes_.clear();
    note(context, everywhere ? "client " + std::to_string(client_) + "'s request took the lock on every server; "
                                   "the other clients' requests let through"
                             : "the other clients' requests let through");
  }

  // The acquire got through (late); the client believes it holds: let it stay
  // inside until another client took the lock that expired meanwhile.
  void tick_acquire(NemesisContext& context, int holder) {
    if (!waiting_) {
      waiting_ = true;
      restore(links_);
      applied_ = false;
      since_ = Clock::now();
      others_before_ = acquisitions_by_others(context, holder);
      note(context, "client " + std::to_string(holder) + "'s acquire returned acquired; links restored");
      return;
    }
    wait_for_other(context, holder, long_patience(ttl_));
  }

  // The holder is inside: its links fail until another client took the lock.
  void tick_held(NemesisContext& context, int holder) {
    if (!waiting_) {
      waiting_ = true;
      links_ = topology(context)->client_links(holder);
      apply_mode(links_, mode_, ms_, direction_);
      applied_ = true;
      since_ = Clock::now();
      others_before_ = acquisitions_by_others(context, holder);
      note(context, what() + " on client " + std::to_string(holder) + "'s links while it holds the lock");
      return;
    }
    if (wait_for_other(context, holder, long_patience(ttl_))) {
      restore(links_);
      applied_ = false;
    }
  }

  // The holder's release goes out into the faulted link; the next holder parks
  // inside; then the release is let through, and a third client may find the
  // lock free although the second still holds it.
  void tick_release(NemesisContext& context, int holder) {
    if (stage_ == 0) {
      links_ = topology(context)->client_links(holder);
      apply_mode(links_, mode_, ms_, direction_);
      applied_ = true;
      note(context, what() + " on client " + std::to_string(holder) + "'s links as it releases");
      contender_.arm(holder);
      gate_.release();
      since_ = Clock::now();
      stage_ = 1;
      return;
    }
    const int next = contender_.parked();
    if (stage_ == 1) {
      if (next < 0) {
        if (Clock::now() - since_ > long_patience(ttl_)) {
          note(context, "no other client acquired within " + ms_text(long_patience(ttl_)));
          restore(links_);
          applied_ = false;
          contender_.release();
          done_ = true;
        }
        return;
      }
      const auto pending = held_requests(links_);
      restore(links_);
      applied_ = false;
      others_before_ = acquisitions_by_others(context, next);
      since_ = Clock::now();
      note(context, "client " + std::to_string(next) + " acquired; client " + std::to_string(holder) +
                        "'s release let through (" + std::to_string(pending) + " request bytes were held)");
      stage_ = 2;
      return;
    }
    if (acquisitions_by_others(context, next) > others_before_) {
      note(context, "a third client acquired while client " + std::to_string(next) + " still holds");
      contender_.release();
      done_ = true;
    } else if (Clock::now() - since_ > short_patience(ttl_)) {
      note(context, "no other client acquired within " + ms_text(short_patience(ttl_)) + " while client " +
                        std::to_string(next) + " holds");
      contender_.release();
      done_ = true;
    }
  }

  // True once the episode is over (another client acquired, or the bound passed).
  bool wait_for_other(NemesisContext& context, int holder, milliseconds bound) {
    if (acquisitions_by_others(context, holder) > others_before_) {
      note(context, "another client acquired while client " + std::to_string(holder) + " still holds");
    } else if (Clock::now() - since_ > bound) {
      note(context, "no other client acquired within " + ms_text(bound));
    } else {
      return false;
    }
    gate_.release();
    done_ = true;
    return true;
  }

  NetMode mode_;
  milliseconds ms_;
  Direction direction_;
  int client_;
  Phase phase_;
  milliseconds ttl_;
  Gate gate_;
  Gate contender_;  // at=release: the client that takes the lock while the release is held
  std::vector<TcpProxy*> links_;
  std::vector<TcpProxy*> others_;  // at=acquire: the other clients' links, held until client N's request landed
  std::vector<RedisProbe> probes_;
  std::int64_t attempts_before_ = 0;
  bool applied_ = false;
  bool waiting_ = false;
  bool done_ = false;
  int stage_ = 0;
  Clock::time_point since_{};
  std::int64_t others_before_ = 0;
};

// ---- unavailable ------------------------------------------------------------------------

class UnavailableFault final : public TopologyFault {
 public:
  UnavailableFault(FaultSpec spec, Phase phase, bool drop_reply, int client, milliseconds bound)
      : TopologyFault(std::move(spec)),
        phase_(phase),
        drop_reply_(drop_reply),
        client_(client),
        bound_(bound),
        gate_(std::string(kCsExit), -1) {}

  FaultNeeds needs() const override {
    FaultNeeds needs;
    needs.client_proxies = true;
    return needs;
  }
  milliseconds allowance(milliseconds) const override { return bound_; }
  StepHook client_step_hook(int client) override {
    return phase_ == Phase::release ? gate_.hook(client) : StepHook{};
  }

  void before_run(NemesisContext& context) override {
    if (topology(context) == nullptr) return note(context, "no topology: nothing done");
    if (phase_ == Phase::acquire) start(context, client_, "acquires");
    else gate_.arm();
  }

  void tick(NemesisContext& context) override {
    if (topology(context) == nullptr) return;
    if (phase_ == Phase::release && target_ < 0 && gate_.parked() >= 0) {
      start(context, gate_.parked(), "releases");
      gate_.release();
    }
    if (!applied_) return;
    if (observed(context) > baseline_) {
      end(context, phase_ == Phase::acquire ? "client " + std::to_string(target_) + "'s acquire failed (" +
                                                  (drop_reply_ ? "unknown outcome" : "error") + "); links restored"
                                            : "client " + std::to_string(target_) +
                                                  "'s release failed (outcome unknown); links restored");
    } else if (Clock::now() - since_ > bound_) {
      end(context, "no failure seen within " + ms_text(bound_) + "; links restored");
    }
  }

  void after_run(NemesisContext& context) override {
    gate_.release();
    if (applied_) end(context, "links restored at the end of the run");
  }

 private:
  std::int64_t observed(const NemesisContext& context) const {
    if (context.history == nullptr) return 0;
    const ClientSlot& slot = context.history->slot(target_);
    return phase_ == Phase::acquire ? slot.errors.load() + slot.unknown.load() + slot.timeouts.load()
                                    : slot.release_errors.load();
  }

  void start(NemesisContext& context, int client, const std::string& when) {
    target_ = client;
    links_ = topology(context)->client_links(client);
    baseline_ = observed(context);
    if (drop_reply_) apply_mode(links_, NetMode::drop, 0ms, Direction::server_to_client);
    else apply_mode(links_, NetMode::cut, 0ms, Direction::both);
    applied_ = true;
    since_ = Clock::now();
    note(context, std::string(drop_reply_ ? "requests applied, replies dropped" : "connections refused (reset)") +
                      " for client " + std::to_string(client) + " as it " + when);
  }

  void end(NemesisContext& context, const std::string& what) {
    restore(links_);
    applied_ = false;
    note(context, what);
  }

  Phase phase_;
  bool drop_reply_;
  int client_;
  milliseconds bound_;
  Gate gate_;
  int target_ = -1;
  std::vector<TcpProxy*> links_;
  bool applied_ = false;
  std::int64_t baseline_ = 0;
  Clock::time_point since_{};
};

// ---- factories ---------------------------------------------------------------------------

// How many lock servers the run's lock uses (0: none, it needs no Redis).
std::size_t lock_server_count(const RunOptions& options) {
  const Generation* generation = find_generation(options.lock);
  if (generation == nullptr || !generation->capabilities.uses_redis) return 0;
  return generation->capabilities.multi_node ? static_cast<std::size_t>(options.nodes) : 1;
}

Result<std::size_t> servers_to_act_on(const FaultSpec& spec, const RunOptions& options) {
  const std::size_t servers = lock_server_count(options);
  if (servers == 0) return fault_error(spec, "needs a lock that uses Redis ('" + options.lock + "' does not)");
  return servers;
}

// holder-nodes=M: the first holder reaches only nodes [0, M) (a bare majority: N/2+1).
Result<std::size_t> holder_nodes_param(const FaultSpec& spec, std::size_t servers) {
  const auto quorum = static_cast<long long>(servers / 2 + 1);
  auto m = param_int(spec, "holder-nodes", static_cast<long long>(servers), quorum, static_cast<long long>(servers));
  if (!m) return fault_error(spec, "holder-nodes must be between " + std::to_string(quorum) + " (a majority) and " +
                                       std::to_string(servers) + " (--nodes)");
  return static_cast<std::size_t>(*m);
}

Result<int> client_param(const FaultSpec& spec, const RunOptions& options, int fallback) {
  auto client = param_int(spec, "client", fallback, 0, options.clients - 1);
  if (!client) return fault_error(spec, "client must be between 0 and " + std::to_string(options.clients - 1));
  return static_cast<int>(*client);
}

}  // namespace

Result<std::unique_ptr<Fault>> make_failover_fault(const FaultSpec& spec, const RunOptions& options) {
  auto after = param_choice(spec, "after", "acquire", "acquire");
  if (!after) return after.error();
  const Generation* generation = find_generation(options.lock);
  if (generation == nullptr || !generation->capabilities.uses_redis || generation->capabilities.multi_node)
    return fault_error(spec, "needs a single-server lock (a master with a replica); '" + options.lock + "' is not one");
  if (options.wait_replicas > 1) return fault_error(spec, "the failover topology has one replica: --wait-replicas 0 or 1");
  return std::unique_ptr<Fault>(
      std::make_unique<FailoverFault>(spec, options.wait_replicas > 0, milliseconds{options.ttl_ms}));
}

Result<std::unique_ptr<Fault>> make_node_crash_fault(const FaultSpec& spec, const RunOptions& options) {
  auto servers = servers_to_act_on(spec, options);
  if (!servers) return servers.error();
  auto nodes = param_int(spec, "nodes", 1, 1, static_cast<long long>(*servers));
  if (!nodes) return fault_error(spec, "nodes must be between 1 and " + std::to_string(*servers) + " (the lock servers)");
  auto restart = param_choice(spec, "restart", "never", "never|now|after-ttl");
  if (!restart) return restart.error();
  auto when = param_choice(spec, "when", "holder", "start|holder");
  if (!when) return when.error();
  auto holder_nodes = holder_nodes_param(spec, *servers);
  if (!holder_nodes) return holder_nodes.error();
  if (*when == "start" && spec.has("holder-nodes")) return fault_error(spec, "holder-nodes needs when=holder");
  const Restart how = *restart == "now" ? Restart::now : *restart == "after-ttl" ? Restart::after_ttl : Restart::never;
  return std::unique_ptr<Fault>(std::make_unique<NodeCrashFault>(spec, static_cast<std::size_t>(*nodes), how,
                                                                 *when == "start", *holder_nodes,
                                                                 milliseconds{options.ttl_ms}));
}

Result<std::unique_ptr<Fault>> make_node_pause_fault(const FaultSpec& spec, const RunOptions& options) {
  auto servers = servers_to_act_on(spec, options);
  if (!servers) return servers.error();
  auto nodes = param_int(spec, "nodes", 1, 1, static_cast<long long>(*servers));
  if (!nodes) return fault_error(spec, "nodes must be between 1 and " + std::to_string(*servers) + " (the lock servers)");
  auto ms = param_int(spec, "ms", 0, 0, kMaxMs);
  if (!ms) return ms.error();
  return std::unique_ptr<Fault>(
      std::make_unique<NodePauseFault>(spec, static_cast<std::size_t>(*nodes), milliseconds{*ms}));
}

Result<std::unique_ptr<Fault>> make_clock_jump_fault(const FaultSpec& spec, const RunOptions& options) {
  auto servers = servers_to_act_on(spec, options);
  if (!servers) return servers.error();
  auto node = param_int(spec, "node", 0, 0, static_cast<long long>(*servers) - 1);
  if (!node) return fault_error(spec, "node must be between 0 and " + std::to_string(*servers - 1));
  auto offset = param_int(spec, "offset", 30'000, -kMaxMs, kMaxMs);
  if (!offset) return offset.error();
  auto when = param_choice(spec, "when", "holder", "holder");
  if (!when) return when.error();
  auto holder_nodes = holder_nodes_param(spec, *servers);
  if (!holder_nodes) return holder_nodes.error();
  return std::unique_ptr<Fault>(std::make_unique<ClockJumpFault>(spec, static_cast<std::size_t>(*node),
                                                                 milliseconds{*offset}, *holder_nodes,
                                                                 milliseconds{options.ttl_ms}));
}

Result<std::unique_ptr<Fault>> make_net_fault(const FaultSpec& spec, const RunOptions& options) {
  if (auto servers = servers_to_act_on(spec, options); !servers) return servers.error();
  if (!spec.has("mode")) return fault_error(spec, "needs mode=cut|delay|hold|drop");
  auto mode = param_choice(spec, "mode", "cut", "cut|delay|hold|drop");
  if (!mode) return mode.error();
  auto ms = param_int(spec, "ms", 0, 0, kMaxMs);
  if (!ms) return ms.error();
  if ((*mode == "delay") != spec.has("ms")) return fault_error(spec, "ms=MS goes with mode=delay, and only with it");
  auto dir = param_choice(spec, "dir", "both", "up|down|both");
  if (!dir) return dir.error();
  if (*mode == "cut" && spec.has("dir")) return fault_error(spec, "a cut resets the whole link: no dir=");
  auto at = param_choice(spec, "at", "held", "acquire|held|release");
  if (!at) return at.error();
  auto target = param_choice(spec, "target", "holder", "holder");
  if (!target) return target.error();
  if (spec.has("target") && spec.has("client")) return fault_error(spec, "give client=N or target=holder, not both");
  if (*at == "acquire" && spec.has("target")) return fault_error(spec, "at=acquire acts on client=N (no holder yet)");
  auto client = client_param(spec, options, *at == "acquire" ? 0 : -1);
  if (!client) return client.error();
  if (spec.has("point") && *at != "release") return fault_error(spec, "point= goes with at=release");
  const std::string point = spec.has("point") ? spec.params.at("point") : std::string(kCsExit);
  const NetMode net_mode = *mode == "cut" ? NetMode::cut : *mode == "delay" ? NetMode::delay
                         : *mode == "hold" ? NetMode::hold : NetMode::drop;
  const Phase phase = *at == "acquire" ? Phase::acquire : *at == "held" ? Phase::held : Phase::release;
  return std::unique_ptr<Fault>(std::make_unique<NetFault>(spec, net_mode, milliseconds{*ms}, direction_of(*dir),
                                                           *client, phase, point, milliseconds{options.ttl_ms}));
}

Result<std::unique_ptr<Fault>> make_unavailable_fault(const FaultSpec& spec, const RunOptions& options) {
  if (auto servers = servers_to_act_on(spec, options); !servers) return servers.error();
  auto at = param_choice(spec, "at", "acquire", "acquire|release");
  if (!at) return at.error();
  auto mode = param_choice(spec, "mode", "refuse", "refuse|drop-reply");
  if (!mode) return mode.error();
  if (*at == "release" && spec.has("client")) return fault_error(spec, "at=release acts on the holder (no client=)");
  auto client = client_param(spec, options, 0);
  if (!client) return client.error();
  // A dropped reply shows only when the client's command times out.
  const milliseconds bound{std::max(2000, options.wait_ms + options.ttl_ms) + 2 * options.ttl_ms + 2000};
  return std::unique_ptr<Fault>(std::make_unique<UnavailableFault>(
      spec, *at == "acquire" ? Phase::acquire : Phase::release, *mode == "drop-reply", *client, bound));
}

}  // namespace locklab::harness
