#include "run/options.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

#include "registry.h"

#include "nemesis/fault_registry.h"

namespace locklab::harness {

FaultEnv fault_env(const RunOptions& given) {
  const RunOptions options = normalized(given);
  FaultEnv env;
  env.clients = options.clients;
  env.thread_clients = options.mode == ClientMode::thread;
  env.ttl_ms = options.ttl_ms;
  env.wait_ms = options.wait_ms;
  env.seed = options.seed;
  env.lock = options.lock;
  if (auto locks = run_locks(options)) env.capabilities = run_capabilities(*locks);
  env.nodes = options.nodes;
  env.wait_replicas = options.wait_replicas;
  env.hosts = options.hosts;
  env.cluster = options.cluster;
  return env;
}

namespace {

// 'text', for messages (built by append: GCC 12 misreads "'" + std::string(...) under -Wrestrict).
std::string quoted(std::string_view text) {
  std::string out = "'";
  out.append(text);
  out.push_back('\'');
  return out;
}

}  // namespace

std::optional<std::vector<FleetMember>> parse_fleet(std::string_view text, std::string* why) {
  auto refuse = [why](std::string problem) -> std::optional<std::vector<FleetMember>> {
    if (why != nullptr) *why = std::move(problem) + " (expected LOCK:N[,LOCK:N]..., e.g. lua-safe-delete:4,ext:redis-py:2)";
    return std::nullopt;
  };
  std::vector<FleetMember> fleet;
  std::set<std::string> seen;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const auto colon = item.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return refuse(quoted(item) + " is not LOCK:N");
    int clients = 0;
    const std::string_view count = item.substr(colon + 1);
    const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), clients);
    if (ec != std::errc{} || end != count.data() + count.size() || clients < 1)
      return refuse(quoted(item) + ": N must be a number of clients >= 1");
    const std::string lock(item.substr(0, colon));
    if (!seen.insert(lock).second) return refuse(lock + " appears twice");
    fleet.push_back({lock, clients});
    if (comma == std::string_view::npos) break;
    if (text.empty()) return refuse("a trailing comma");
  }
  if (fleet.empty()) return refuse("no lock");
  return fleet;
}

std::string fleet_text(const std::vector<FleetMember>& fleet) {
  std::string text;
  for (const auto& member : fleet)
    text += (text.empty() ? "" : ",") + member.lock + ":" + std::to_string(member.clients);
  return text;
}

RunOptions normalized(RunOptions options) {
  if (options.fleet.empty()) return options;
  options.lock = fleet_text(options.fleet);
  options.clients = 0;
  for (const auto& member : options.fleet) options.clients += member.clients;
  return options;
}

// The one bare `adapter` command would run for every unshipped label the
// user gave no adapter of their own: two different labels, one program.
std::optional<std::string> shared_command_problem(const RunOptions& options, const std::vector<FleetMember>& members) {
  if (options.adapter.empty()) return std::nullopt;
  std::string labels;
  int count = 0;
  for (const auto& member : members)
    if (member.lock.starts_with(kAdapterPrefix) && !is_shipped(member.lock) && !options.user_adapters.find(member.lock)) {
      labels += (labels.empty() ? "" : ", ") + member.lock;
      ++count;
    }
  if (count < 2) return std::nullopt;
  return "--adapter '" + options.adapter + "' would be one command for " + std::to_string(count) +
         " unshipped labels (" + labels + "): give each its own, --adapter LABEL='CMD ARGS'";
}

Result<std::vector<RunLock>> run_locks(const RunOptions& given) {
  const RunOptions options = normalized(given);
  std::vector<FleetMember> members = options.fleet;
  if (members.empty()) members.push_back({options.lock, options.clients});
  const char* flag = options.fleet.empty() ? "--lock" : "--fleet";
  if (auto problem = shared_command_problem(options, members)) return Error{ErrorKind::usage, *problem};
  std::vector<RunLock> locks;
  int first = 0;
  for (const auto& member : members) {
    const LockDescription* own = options.user_adapters.find(member.lock);
    // In a fleet a bare --adapter is its one unshipped label's (user_adapters
    // has it): a shipped member is the shipped one, not "yours with its name".
    auto lock = own != nullptr ? Result<LockDescription>(*own)
              : options.fleet.empty() ? find_lock(member.lock, options.adapter) : find_lock(member.lock);
    if (!lock && own == nullptr && !options.fleet.empty() && !options.adapter.empty())
      lock = find_lock(member.lock, options.adapter);
    if (!lock) {
      const std::string& why = lock.error().message;
      return Error{ErrorKind::usage, why.rfind("--", 0) == 0 ? why : option_problem(flag, why)};
    }
    locks.push_back({std::move(lock).value(), first, member.clients});
    first += member.clients;
  }
  return locks;
}

Capabilities run_capabilities(const std::vector<RunLock>& locks) {
  Capabilities can = locks.empty() ? Capabilities{} : locks.front().lock.capabilities;
  for (const auto& member : locks) {
    can.uses_redis = can.uses_redis || member.lock.capabilities.uses_redis;
    can.multi_node = can.multi_node || member.lock.capabilities.multi_node;
    // A fleet's releases are owner-checked only if every member's are.
    can.owner_checked_release = can.owner_checked_release && member.lock.capabilities.owner_checked_release;
  }
  return can;
}

Result<std::unique_ptr<Fault>> make_fault(const FaultSpec& spec, const RunOptions& options) {
  return make_fault(spec, fault_env(options));
}

Result<std::unique_ptr<FaultSet>> make_faults(const RunOptions& options) {
  return make_faults(options.faults, fault_env(options));
}

std::vector<std::string> random_schedule(std::uint64_t seed, int count, const RunOptions& options) {
  return random_schedule(seed, count, fault_env(options));
}

std::string bound_rule(const Bound& bound) {
  auto number = [](double value) {
    std::ostringstream out;
    out.precision(15);
    out << value;
    return out.str();
  };
  const std::string unit(bound.unit);
  if (bound.max == bounds::kNone) return "must be >= " + number(bound.min) + unit;
  if (bound.min_open) return "must be in (" + number(bound.min) + ", " + number(bound.max) + "]" + unit;
  return "must be between " + number(bound.min) + " and " + number(bound.max) + unit;
}

std::string option_problem(std::string_view flag, std::string_view problem) {
  return std::string(flag) + ": " + std::string(problem);
}

std::optional<std::string> out_of_bounds(const Bound& bound, double value) {
  const bool above_min = bound.min_open ? value > bound.min : value >= bound.min;
  if (above_min && value <= bound.max) return std::nullopt;  // NaN fails both: out of bounds
  return option_problem(bound.flag, bound_rule(bound));
}

std::optional<std::string> unknown_lock(const std::string& lock) {
  auto found = find_lock(lock);
  if (found) return std::nullopt;
  return found.error().message;
}

std::optional<std::string> key_problem(std::string_view key) {
  if (!key.empty()) return std::nullopt;
  return "must not be empty";
}

int effective_stall_ms(const RunOptions& options) {
  return options.stall_ms > 0 ? options.stall_ms : 3 * options.ttl_ms;
}

const char* mode_name(ClientMode mode) { return mode == ClientMode::process ? "process" : "thread"; }

std::optional<ClientMode> parse_mode(std::string_view name) {
  if (name == "process") return ClientMode::process;
  if (name == "thread") return ClientMode::thread;
  return std::nullopt;
}

namespace {

// What --cluster cannot be combined with (the faults are checked with the others).
std::optional<std::string> cluster_problem(const RunOptions& options, const Capabilities& can) {
  if (!options.cluster) return std::nullopt;
  if (can.multi_node)
    return "--cluster stores each key on one master; " + options.lock + " needs independent masters (--redis or --nodes)";
  if (!options.sentinels.empty()) return "--cluster and --sentinel exclude each other";
  return std::nullopt;
}

// The lock servers are ours only when locklab lays them out itself
// (servers/lock_server_layout.h). With --cluster, --sentinel or --redis they are someone else's:
// a fault that acts on our servers, proxies or replicas would find none there
// and do nothing (the run would read safe for a fault that never happened).
// The flag that makes them someone else's, or nullopt.
std::optional<std::string> lock_servers_not_ours(const RunOptions& options) {
  if (options.cluster) return "--cluster";
  if (!options.sentinels.empty()) return "--sentinel";
  if (!options.redis.empty()) return "--redis";
  return std::nullopt;
}

std::optional<std::string> faults_problem(const RunOptions& options) {
  if (options.faults.empty()) return std::nullopt;
  auto faults = make_faults(options);
  if (!faults) return "--fault: " + faults.error().message;
  if (!(*faults)->needs().own_servers) return std::nullopt;
  // --cluster --fault failover starts a cluster of its own whose key's master
  // the fault fails over (servers/cluster_failover_topology.h).
  if (options.cluster && options.redis.empty() && (*faults)->needs().replica_via_proxy &&
      (*faults)->name() == "failover")
    return std::nullopt;
  if (const auto flag = lock_servers_not_ours(options))
    return "--fault: " + (*faults)->name() + " acts on servers locklab starts itself; with " + *flag +
           " the lock servers are not ours (client-side faults only)";
  return std::nullopt;
}

// The adapters of the run: process clients only (an adapter is a process of
// its client's group), and --adapter only for a lock that is not shipped.
std::optional<std::string> adapter_problem(const RunOptions& options, const std::vector<RunLock>& locks) {
  bool unshipped = false;
  for (const auto& member : locks) {
    if (!member.lock.is_adapter()) continue;
    unshipped = unshipped || !member.lock.shipped;
    if (options.mode == ClientMode::thread)
      return "--mode thread: " + member.lock.name + " starts an adapter process in each client; use --mode process";
  }
  if (!options.adapter.empty() && !unshipped)
    return "--adapter needs --lock ext:LABEL (or a fleet member ext:LABEL) that the catalog does not ship";
  return std::nullopt;
}

// The --fault form that acts where a --step cannot: at a protocol step point
// the fault proxy sees (docs/faults.md, "Protocol step points").
std::string resp_form(const StepAction& step) {
  switch (step.kind) {
    case StepAction::Kind::crash: return "--fault holder-crash:at=resp:DEL";
    case StepAction::Kind::delay: return "--fault slow-holder:ms=" + std::to_string(step.delay.count());
    case StepAction::Kind::pause: break;
  }
  if (step.pause.until != PauseRule::Until::time)
    return std::string("--fault holder-pause:at=resp:DEL:until=") + pause_until_name(step.pause.until);
  return "--fault holder-pause:at=resp:DEL:ms=" + std::to_string(step.pause.ms.count());
}

// A --step must name a point the clients it targets can reach: one of their
// generation's step points or the workload's own. An adapter (a library in
// another process) calls no step hook of ours: a --step there would do nothing.
std::optional<std::string> step_point_problem(const StepAction& step, const std::vector<RunLock>& locks) {
  const std::set<std::string_view> workload = {kCsEnter, kCsExit, kCsRead};
  for (const auto& member : locks) {
    if (step.client >= 0 && (step.client < member.first_client || step.client >= member.first_client + member.clients))
      continue;
    if (member.lock.is_adapter())
      return "--step " + step.point + ": " + member.lock.label +
             " is an adapter (a library in another process) and reaches no step point of ours; use a protocol step "
             "point instead, e.g. " + resp_form(step) + " (docs/faults.md)";
    if (workload.count(step.point) != 0) continue;
    const auto& points = step_points(member.lock.name);
    if (std::find(points.begin(), points.end(), step.point) != points.end()) continue;
    std::string known;
    for (const auto point : points) known.append(known.empty() ? "" : ", ").append(point);
    for (const auto point : workload) known.append(known.empty() ? "" : ", ").append(point);
    return "--step " + step.point + ": " + member.lock.name + " has no step point '" + step.point + "' (its points: " +
           known + ")";
  }
  return std::nullopt;
}

// --wait-replicas: every lock of the run must implement the guard.
std::optional<std::string> wait_replicas_problem(const RunOptions& options, const std::vector<RunLock>& locks) {
  if (options.wait_replicas == 0) return std::nullopt;
  for (const auto& member : locks) {
    if (member.lock.capabilities.honours_wait_replicas) continue;
    std::string guarded;
    for (const auto& candidate : generations())
      if (candidate.capabilities.honours_wait_replicas) guarded += (guarded.empty() ? "" : ", ") + candidate.name;
    return "--wait-replicas applies to " + guarded + ", not " + member.lock.name;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate(const RunOptions& given) {
  const RunOptions options = normalized(given);
  if (given.fleet.empty() && options.lock.empty()) return "--lock or --fleet is required";
  auto locks = run_locks(options);
  if (!locks) return locks.error().message;
  const Capabilities can = run_capabilities(*locks);
  if (!given.fleet.empty() && out_of_bounds(bounds::clients, options.clients))
    return "--fleet: " + std::to_string(options.clients) + " clients in all; " + bound_rule(bounds::clients);
  // --ops and --duration exclude each other: only the one in force is checked.
  std::vector<std::pair<Bound, double>> numbers = {{bounds::clients, options.clients}};
  if (options.ops)
    numbers.emplace_back(bounds::ops, static_cast<double>(*options.ops));
  else
    numbers.emplace_back(bounds::duration_s, options.duration_s);
  numbers.insert(numbers.end(), {
      {bounds::hold_ms, options.hold_ms},
      {bounds::ttl_ms, options.ttl_ms},
      {bounds::wait_ms, options.wait_ms},
      {bounds::retry_ms, options.retry_ms},
      {bounds::nodes, options.nodes},
      {bounds::stall_ms, options.stall_ms},
      {bounds::wait_replicas, options.wait_replicas},
      {bounds::wait_replicas_timeout_ms, options.wait_replicas_timeout_ms},
      {bounds::hosts, options.hosts},
      {bounds::barrier_timeout_ms, options.barrier_timeout_ms},
  });
  for (const auto& [bound, value] : numbers)
    if (auto problem = out_of_bounds(bound, value)) return problem;
  if (auto problem = key_problem(options.key)) return option_problem("--key", *problem);
  for (const auto& endpoint : options.redis)
    if (endpoint.port <= 0 || endpoint.port > 65535) return "--redis: bad port in " + endpoint.to_string();
  // With servers of its own locklab keeps the counter on a server apart already.
  if (options.counter_redis && !lock_servers_not_ours(options)) return "--counter-redis needs --redis, --sentinel or --cluster";
  if (auto problem = cluster_problem(options, can)) return problem;
  if (!options.sentinels.empty() && !options.redis.empty()) return "--sentinel and --redis exclude each other";
  if (!options.sentinels.empty() && can.multi_node)
    return "--sentinel names one master; " + options.lock + " needs several (--redis)";
  if (options.own_oracle && options.oracle) return "--oracle: either the run's own (no value) or HOST:PORT, not both";
  if (options.own_oracle && !options.run_id.empty())
    return "--run-id needs the hosts' shared oracle (--oracle HOST:PORT), not the run's own (bare --oracle)";
  if (options.oracle && options.run_id.empty())
    return "--oracle HOST:PORT needs --run-id (bare --oracle starts the run's own oracle)";
  if (!options.run_id.empty() && !options.oracle) return "--run-id needs --oracle (the barrier and the occupancy oracle)";
  if (!options.run_id.empty() && options.redis.empty() && options.sentinels.empty())
    return "--run-id needs --redis or --sentinel (every host must use the same servers)";
  if (options.hosts > 1 && options.run_id.empty()) return "--hosts needs --run-id";
  for (const auto& step : options.steps) {
    if (step.client >= options.clients)
      return "--step " + step.point + ": client " + std::to_string(step.client) + " does not exist (--clients " +
             std::to_string(options.clients) + ")";
    // In thread mode the clients share the coordinator's process: stopping or
    // exiting it would stop or end the whole run.
    if (options.mode == ClientMode::thread && step.kind != StepAction::Kind::delay)
      return "--step pause/crash need --mode process (a thread cannot stop or die alone)";
    if (auto problem = step_point_problem(step, *locks)) return problem;
  }
  if (auto problem = adapter_problem(options, *locks)) return problem;
  if (auto problem = faults_problem(options)) return problem;
  return wait_replicas_problem(options, *locks);
}

}  // namespace locklab::harness
