#include "run/options.h"

#include <sstream>

#include "nemesis/fault_registry.h"
#include "registry.h"

namespace locklab::harness {

FaultEnv fault_env(const RunOptions& options) {
  FaultEnv env;
  env.clients = options.clients;
  env.thread_clients = options.mode == ClientMode::thread;
  env.ttl_ms = options.ttl_ms;
  env.wait_ms = options.wait_ms;
  env.seed = options.seed;
  env.lock = options.lock;
  env.nodes = options.nodes;
  env.wait_replicas = options.wait_replicas;
  return env;
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
  if (find_generation(lock) != nullptr) return std::nullopt;
  return "unknown lock '" + lock + "' (see: locklab list)";
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
std::optional<std::string> cluster_problem(const RunOptions& options, const Generation& generation) {
  if (!options.cluster) return std::nullopt;
  if (generation.capabilities.multi_node)
    return "--cluster stores each key on one master; " + options.lock + " needs independent masters (--redis or --nodes)";
  if (!options.sentinels.empty()) return "--cluster and --sentinel exclude each other";
  return std::nullopt;
}

// The lock servers are ours only when locklab lays them out itself
// (servers/lock_topology.h). With --cluster, --sentinel or --redis they are someone else's:
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
  if (const auto flag = lock_servers_not_ours(options))
    return "--fault: " + (*faults)->name() + " acts on servers locklab starts itself; with " + *flag +
           " the lock servers are not ours (client-side faults only)";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate(const RunOptions& options) {
  if (auto problem = unknown_lock(options.lock)) return option_problem("--lock", *problem);
  const Generation& generation = *find_generation(options.lock);
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
  if (auto problem = cluster_problem(options, generation)) return problem;
  if (!options.sentinels.empty() && !options.redis.empty()) return "--sentinel and --redis exclude each other";
  if (!options.sentinels.empty() && generation.capabilities.multi_node)
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
  }
  if (auto problem = faults_problem(options)) return problem;
  if (options.wait_replicas > 0 && !generation.capabilities.honours_wait_replicas) {
    std::string guarded;
    for (const auto& candidate : generations())
      if (candidate.capabilities.honours_wait_replicas) guarded += (guarded.empty() ? "" : ", ") + candidate.name;
    return "--wait-replicas applies to " + guarded + ", not " + options.lock;
  }
  return std::nullopt;
}

}  // namespace locklab::harness
