// The options of one run: the one source of its defaults (RunOptions' member
// initialisers) and of its limits (`bounds`). The CLI's validators and
// validate() both read them, so a value the CLI refuses is the value a library
// caller (the sweeps, the benchmarks, tests) is refused, with the same
// one-line message.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/connection.h"
#include "redis/result.h"

#include "nemesis/fault.h"
#include "nemesis/fault_env.h"
#include "nemesis/fault_spec.h"
#include "nemesis/nemesis.h"
#include "servers/given_or_own_servers.h"
#include "workload/lock_catalog.h"
#include "workload/user_adapters.h"
#include "workload/workload.h"

namespace locklab::harness {

// One lock of a mixed fleet and how many clients run it (`--fleet LOCK:N,...`).
struct FleetMember {
  std::string lock;
  int clients = 0;
};

struct RunOptions {
  std::string lock;  // with a fleet: its spec, "lua-safe-delete:4,ext:redis-py:2" (normalized())
  int clients = 8;   // with a fleet: the members' sum (normalized())
  // `--adapter 'CMD ARGS'`: the command of the run's ext: lock the catalog
  // does not ship (workload/lock_catalog.h); its capabilities come from its init_ok.
  std::string adapter;
  // `--adapter LABEL='CMD ARGS'`, `--catalog FILE` (workload/user_adapters.h):
  // the user's adapters, found before the shipped catalog and `adapter`.
  UserAdapters user_adapters;
  // `--fleet`: different locks on one key and one counter, clients numbered in
  // member order. Empty: every client runs `lock`.
  std::vector<FleetMember> fleet;
  std::optional<std::int64_t> ops;  // nullopt: run for duration_s
  double duration_s = 3.0;
  int hold_ms = 1;
  int ttl_ms = 2000;  // hold << ttl: the TTL generations are safe when nothing fails
  int wait_ms = 1000;
  int retry_ms = 5;
  ClientMode mode = ClientMode::process;
  std::vector<redis::Endpoint> redis;            // empty: start our own servers
  std::optional<redis::Endpoint> counter_redis;  // with redis or cluster: default = the first lock server / the cluster
  // A Redis Cluster (docs/topologies.md): without `redis`, a 3-master cluster
  // started for the run (`wait_replicas` replicas per master); with `redis`,
  // those are seeds of an existing cluster. Commands are routed by key slot.
  bool cluster = false;
  int nodes = 5;                                 // multi-node generations without redis
  int wait_replicas = 0;  // the failover guard (generations 4, 5); own servers: start this many replicas
  int wait_replicas_timeout_ms = 100;
  std::string key = "locklab:lock";
  std::uint64_t seed = 1;
  int stall_ms = 0;  // 0 = 3 x ttl (deadlock = no acquisition for k x TTL, k ~ 3)
  std::vector<StepAction> steps;
  std::vector<std::string> step_specs;  // as given, for the record
  std::vector<std::string> faults;      // --fault specs as given (nemesis/fault_registry.h builds them; recorded in config)
  bool progress = false;
  std::string json_path;  // recorded in config only; the caller writes
  std::string command;    // the command line that asked for this run, recorded for reproduction
  bool expect_safe = false;  // recorded in config only; the CLI decides the exit code
  // Several client hosts (host_coordinator.h): the same run id on every host, the
  // oracle Redis for the barriers and the section oracle, and how many hosts.
  std::string run_id;                     // empty: a single-host run
  std::optional<redis::Endpoint> oracle;  // with run_id
  // One host: the oracle Redis beside the history is one the run starts for
  // itself (bare --oracle; docs/harness.md, "Two oracles"). Not with run_id.
  bool own_oracle = false;
  int hosts = 1;
  int barrier_timeout_ms = 60'000;        // how long a host waits for the others
  // An existing Sentinel deployment: the lock server is the master these
  // sentinels name (SENTINEL get-master-addr-by-name), asked once at the start.
  std::vector<redis::Endpoint> sentinels;
  std::string sentinel_master = "mymaster";
};

// `compare --quick`: about one second per generation (CI). Every other value of
// the comparison's workload is RunOptions' default.
inline constexpr double kQuickDurationS = 1.0;

// A numeric limit of one option, named by its flag: [min, max], or (min, max]
// when min_open. An infinite max means "no upper limit".
struct Bound {
  std::string_view flag;
  double min;
  double max;
  std::string_view unit;  // " ms", " s" or ""
  bool min_open = false;
};

namespace bounds {
inline constexpr double kNone = std::numeric_limits<double>::infinity();
// The upper limits keep every derived time (3 x ttl, wait + ttl, deadlines) far from overflow.
inline constexpr Bound clients{"--clients", 1, 256, ""};
inline constexpr Bound ops{"--ops", 1, 100'000'000, ""};
inline constexpr Bound duration_s{"--duration", 0, 3600, " s", /*min_open=*/true};
inline constexpr Bound hold_ms{"--hold", 0, 3'600'000, " ms"};
inline constexpr Bound ttl_ms{"--ttl", 1, 86'400'000, " ms"};
inline constexpr Bound wait_ms{"--wait", 0, 86'400'000, " ms"};
inline constexpr Bound retry_ms{"--retry", 0, kNone, " ms"};
inline constexpr Bound nodes{"--nodes", 1, 15, ""};
inline constexpr Bound stall_ms{"--stall", 0, 86'400'000, " ms"};
inline constexpr Bound wait_replicas{"--wait-replicas", 0, 5, ""};
inline constexpr Bound wait_replicas_timeout_ms{"--wait-replicas-timeout", 1, kNone, " ms"};
inline constexpr Bound hosts{"--hosts", 1, 1024, ""};
inline constexpr Bound barrier_timeout_ms{"--barrier-timeout", 1, 86'400'000, " ms"};
}  // namespace bounds

// What the bound asks for, without the flag: "must be between 1 and 256".
std::string bound_rule(const Bound& bound);
// "--clients: must be between 1 and 256" when `value` is out of bounds, else nullopt.
std::optional<std::string> out_of_bounds(const Bound& bound, double value);

// "FLAG: PROBLEM", the one shape of every option error (CLI11 words the errors
// of its validators the same way, so the CLI and validate() print the same line).
std::string option_problem(std::string_view flag, std::string_view problem);
// The problems validate() checks one option at a time, for the CLI's validators.
std::optional<std::string> unknown_lock(const std::string& lock);  // "unknown lock 'x' (see: locklab list)"
std::optional<std::string> key_problem(std::string_view key);      // "must not be empty"

// The one problem with the options (the first found, one line), or nullopt.
// measure() refuses invalid options with exactly this message (ErrorKind::usage).
std::optional<std::string> validate(const RunOptions& options);

// "NAME:N[,NAME:N]..." (NAME may hold ':', as ext:redis-py does; N >= 1), or
// nullopt and *why. Names are checked later, against the catalog.
std::optional<std::vector<FleetMember>> parse_fleet(std::string_view text, std::string* why);
// The fleet's spec, as `lock` records it: "lua-safe-delete:4,ext:redis-py:2".
std::string fleet_text(const std::vector<FleetMember>& fleet);
// With a fleet, `lock` and `clients` as the fleet makes them; else unchanged.
RunOptions normalized(RunOptions options);

// One lock of the run: its description and the clients that run it.
struct RunLock {
  LockDescription lock;
  int first_client = 0;
  int clients = 0;
};
// The run's locks (the fleet's members, or `lock` for every client), each
// described by the lock catalog; a usage Error names the first unknown one.
Result<std::vector<RunLock>> run_locks(const RunOptions& options);
// What the run's servers must serve: the first lock's capabilities, with
// uses_redis and multi_node if any member's says so.
Capabilities run_capabilities(const std::vector<RunLock>& locks);

// The stall threshold in force: --stall, or 3 x ttl when it is 0.
int effective_stall_ms(const RunOptions& options);

// The part of the options a fault may see (nemesis/fault_env.h), and the fault
// registry's factories (nemesis/fault_registry.h) called with the whole options.
// The lock's capabilities come from the catalog (none for an unknown lock).
FaultEnv fault_env(const RunOptions& options);
Result<std::unique_ptr<Fault>> make_fault(const FaultSpec& spec, const RunOptions& options);
Result<std::unique_ptr<FaultSet>> make_faults(const RunOptions& options);  // every --fault
std::vector<std::string> random_schedule(std::uint64_t seed, int count, const RunOptions& options);

// "process" / "thread", as the CLI and the document spell the mode.
const char* mode_name(ClientMode mode);
std::optional<ClientMode> parse_mode(std::string_view name);

}  // namespace locklab::harness
