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
// reports two points of its own through the same hook:
//   "locklab:cs-enter"  the client just acquired and is inside
//   "locklab:cs-exit"   the client is about to release
// The default Nemesis does nothing. Faults come in a later issue; StepAction
// below is the small spec they can be expressed in already.
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
#include "redis_server.h"
#include "step_points.h"

namespace locklab::harness {

inline constexpr std::string_view kCsEnter = "locklab:cs-enter";
inline constexpr std::string_view kCsExit = "locklab:cs-exit";

struct NemesisContext {
  std::vector<RedisServer*> lock_servers;           // empty when --redis points at servers we do not own
  std::vector<redis::ConnectionOptions> endpoints;  // the lock servers, owned or not
  RedisServer* counter_server = nullptr;            // never faulted by design; here for completeness
  std::vector<pid_t> client_pids;                   // process mode; empty in thread mode
  std::function<int()> current_holder;              // client index inside its critical section, or -1
  std::chrono::steady_clock::time_point started{};  // the barrier opened
};

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
};

// What a client does when it reaches a step point.
struct StepAction {
  enum class Kind { pause, delay, crash };
  std::string point;               // a generation's step point, or kCsEnter / kCsExit
  Kind kind = Kind::pause;
  int client = -1;                 // -1: any client
  std::chrono::milliseconds delay{0};  // Kind::delay
  int times = 1;                   // how many hits act (0 = every hit)
};

// "POINT:ACTION[:CLIENT[:TIMES]]", ACTION = pause | crash | delay=MS.
// pause = raise(SIGSTOP) (the whole client process stops, like a GC pause; a
// nemesis resumes it with SIGCONT), crash = _exit(86) without releasing.
// Returns nullopt and sets *why when malformed.
std::optional<StepAction> parse_step_action(std::string_view spec, std::string* why);

// The hook for `client` from the actions that apply to it.
StepHook make_step_hook(std::vector<StepAction> actions, int client);

// Nemesis that only installs step actions in the clients.
class StepNemesis final : public Nemesis {
 public:
  explicit StepNemesis(std::vector<StepAction> actions) : actions_(std::move(actions)) {}
  std::string name() const override { return "step-actions"; }
  StepHook client_step_hook(int client) override { return make_step_hook(actions_, client); }

 private:
  std::vector<StepAction> actions_;
};

inline constexpr int kCrashExitCode = 86;  // a client that "crashed" at a step point

}  // namespace locklab::harness
