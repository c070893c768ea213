// The nemesis seam (Jepsen's "nemesis"): who may act on the run, and where.
//
// The workload calls a Nemesis at fixed points in the COORDINATOR process:
// before the clients start, whenever a new holder enters its critical
// section, periodically while the run goes on, and after the clients
// finished. Through NemesisContext it can reach the lock servers (pause,
// crash, restart), the client processes (SIGSTOP/SIGKILL by pid) and the
// current holder.
//
// A fault at a step point must happen INSIDE the client, at the exact moment
// (a pause between GET and DEL). That part is a StepHook the nemesis hands to
// client i; it runs in that client's process (or thread). The workload also
// reports three points of its own through the same hook:
//   "locklab:cs-enter"  the client just acquired and is inside
//   "locklab:cs-exit"   the client is about to release
//   "locklab:cs-read"   inside: its counter read was accepted, its write not yet sent
// The default Nemesis does nothing. Faults (fault.h, nemesis/fault_registry.h: `--fault SPEC`)
// and step actions (StepAction below: `--step POINT:ACTION`; StepNemesis in
// nemesis/step_actions.h) are nemeses.
//
// A client that must be stopped (a GC pause) parks at its step point and the
// coordinator SIGSTOPs the whole process -- watchdog threads included -- and
// SIGCONTs it when the pause's condition holds (nemesis/client_parking.h, ClientParking).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/connection.h"

#include "clock.h"
#include "step_points.h"

#include "servers/redis_server.h"

namespace locklab::harness {

inline constexpr std::string_view kCsEnter = "locklab:cs-enter";
inline constexpr std::string_view kCsExit = "locklab:cs-exit";
inline constexpr std::string_view kCsRead = "locklab:cs-read";  // the counter read was accepted; the write is next

class SharedHistory;
class LockServerLayout;
class ClusterFailoverTopology;

struct NemesisContext {
  std::vector<RedisServer*> lock_servers;           // empty when --redis points at servers we do not own
  std::vector<redis::ConnectionOptions> endpoints;  // the lock servers, owned or not
  RedisServer* counter_server = nullptr;            // never faulted by design; here for completeness
  std::vector<pid_t> client_pids;                   // process mode; empty in thread mode
  std::function<int()> current_holder;              // client index inside its critical section, or -1
  std::chrono::steady_clock::time_point started{};  // the barrier opened
  const SharedHistory* history = nullptr;           // what the clients did so far (conditions on it)
  std::string key;                                  // the run's key (--key), as given to the locks
  std::chrono::milliseconds ttl{0};                 // the lock's lease (--ttl)
  // The lease the lock really takes: the ttl rounded up to its resolution (setnx-expire's EXPIRE
  // takes whole seconds), as the bites judge it (run/run.cpp, lease_taken).
  std::chrono::milliseconds lease{0};
  LockServerLayout* topology = nullptr;             // own servers: fronts, client links, replica (servers/lock_server_layout.h)
  // --cluster --fault failover: the run's own cluster, the key's master replicating through a proxy.
  ClusterFailoverTopology* cluster_failover = nullptr;
  // The Redis key client i's lock holds for `key` (a library may lock
  // another: "mutex:K"; workload/lock_catalog.h, locked_key()); "" where it
  // is unknown. Empty: every client's lock holds `key` itself.
  std::vector<std::string> client_keys;
};

// The Redis key client `client`'s lock holds (client_keys, else `key`).
const std::string& lock_key_of(const NemesisContext& context, int client);
// Every known Redis key the run's locks hold, each once, in client order.
std::vector<std::string> lock_keys(const NemesisContext& context);

class Nemesis {
 public:
  virtual ~Nemesis() = default;
  virtual std::string name() const { return "none"; }
  virtual void before_run(NemesisContext&) {}
  virtual void holder_entered(NemesisContext&, int /*client*/) {}
  virtual void tick(NemesisContext&) {}  // every few ms while the clients run
  virtual void after_run(NemesisContext&) {}
  // Installed as client i's step hook (runs in the client). Empty = none.
  virtual StepHook client_step_hook(int /*client*/) { return {}; }
  // Client i's wall clock (LockConfig::clock) when the nemesis skews it; null = the real one.
  virtual std::shared_ptr<const WallClock> client_clock(int /*client*/) { return nullptr; }
  // "NAME=VALUE" variables set in client i's process before it makes its lock
  // (process mode): a program the client starts, its adapter, inherits them.
  // The clock-skew fault preloads the clock shim into an adapter this way.
  virtual std::vector<std::string> client_environment(int /*client*/) { return {}; }
};

// How long a stopped client stays stopped: a time, or until a condition holds
// (polled by the coordinator), never longer than `max`.
struct PauseRule {
  // other_inside: another client entered after the stop and is inside now
  // (the release race: the late release meets the new holder inside).
  enum class Until { time, expired, other_acquired, other_inside };
  Until until = Until::time;
  std::chrono::milliseconds ms{0};   // Until::time
  std::chrono::milliseconds max{0};  // bound on any pause; 0 = 10 x ttl
};
// "expired" | "other-acquired" | "other-inside" (the spellings of --step and --fault).
std::optional<PauseRule::Until> parse_pause_until(std::string_view word);
const char* pause_until_name(PauseRule::Until until);

// What a client does when it reaches a step point.
struct StepAction {
  enum class Kind { pause, delay, crash };
  std::string point;               // a generation's step point, or kCsEnter / kCsExit
  Kind kind = Kind::pause;
  int client = -1;                 // -1: any client
  std::chrono::milliseconds delay{0};  // Kind::delay
  PauseRule pause;                 // Kind::pause
  int times = 1;                   // how many hits act (0 = every hit)
  std::string spec;                // as given to --step, for the run document ("" when built in code)
};

// "POINT:ACTION[:CLIENT[:TIMES]]", ACTION = pause=MS | pause-until=expired|other-acquired
// | crash | delay=MS. pause stops the whole client process (SIGSTOP from the
// coordinator, like a GC pause: watchdogs stop too) and the coordinator resumes
// it after MS, or once the condition holds (at most 10 x ttl); crash =
// _exit(86) without releasing. Returns nullopt and sets *why when malformed.
std::optional<StepAction> parse_step_action(std::string_view spec, std::string* why);

inline constexpr int kCrashExitCode = 86;  // a client that "crashed" at a step point
inline constexpr int kAdapterDiedExitCode = 87;  // a client whose adapter exited mid-run: crashed too (its last_error says why)

}  // namespace locklab::harness
