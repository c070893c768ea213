// Uncontended acquire + release, per generation, against the physical floor
// measured in the same binary and the same run (bench/raw_floor.h), on real
// redis-server processes this binary starts (5 masters).
//
// Names line up for Google Benchmark's compare.py (`filters` mode replaces the
// filter's match in each name, so what is left must be equal):
//
//   BM_Cycle/floor/nodes:1             raw hiredis: SET NX PX + DEL, blocking (2 round trips)
//   BM_Cycle/fanout-floor/nodes:N      raw hiredis: SET NX PX to N nodes at once, poll all
//                                      fds; then DEL the same way (2 round trips, 2N commands)
//   BM_Cycle/<generation>/nodes:1      every registry generation (multi-node ones: nodes:5)
//   BM_Cycle/redlock/nodes:N           Redlock on 1, 3 and 5 nodes
//   BM_Harness/raw-get-set/clients:1   raw hiredis GET + SET: the critical section's wire work
//   BM_Harness/client-loop/clients:1   the harness's own client loop (locklab run, thread
//                                      mode, no-lock) per acquisition: its overhead over the floor
//   BM_Adapter/echo-floor              the adapter round trip's reference: `cat` echoing a noop
//                                      request line over AdapterLock's socket pair, timed as
//                                      AdapterLock times a noop (counters p50_us, p99_us)
//
//   compare.py filters results/bench/lock_bench.json BM_Cycle/floor/ BM_Cycle/lua-safe-delete/
//   compare.py filters results/bench/lock_bench.json BM_Cycle/fanout-floor/ BM_Cycle/redlock/
//   compare.py filters results/bench/lock_bench.json BM_Harness/raw-get-set/clients:1
//                                                    BM_Harness/client-loop/clients:1/iterations:1  (one line)
//
// Counters (counts, which machine noise does not move): round_trips and
// commands per cycle as the client counted them (redis::traffic(); a fan-out to
// N nodes is one round trip and N commands), and server_commands per cycle
// (INFO commandstats over the servers; Lua-called commands included).
//
//   build/default/bench/lock_bench --benchmark_min_time=0.2
//   scripts/bench   (builds, runs, writes results/bench/*.json)
#include <cstdio>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "raw_floor.h"
#include "registry.h"

#include "history/metrics.h"
#include "run/run.h"
#include "servers/server_stats.h"
#include "workload/adapter_lock.h"

namespace {

using namespace std::chrono_literals;
using locklab::bench::expect_outcome;
using locklab::bench::fail;
using locklab::redis::ConnectionOptions;

constexpr std::size_t kMasters = 5;
const std::string kTtlMs = "10000";

// Server commands (INFO commandstats) on `nodes` between construction and per_cycle().
class ServerCommands {
 public:
  explicit ServerCommands(std::vector<ConnectionOptions> nodes) : nodes_(std::move(nodes)), before_(served()) {}
  double per_cycle(std::int64_t cycles) const {
    if (!before_ || cycles <= 0) return 0;
    const auto after = served();
    return after ? static_cast<double>(*after - *before_) / static_cast<double>(cycles) : 0;
  }

 private:
  std::optional<std::int64_t> served() const {
    auto total = locklab::harness::commands_served(nodes_);
    return total ? std::optional(*total) : std::nullopt;
  }
  std::vector<ConnectionOptions> nodes_;
  std::optional<std::int64_t> before_;
};

void set_counters(benchmark::State& state, double round_trips, double commands, double server_commands) {
  state.counters["round_trips"] = round_trips;
  state.counters["commands"] = commands;
  state.counters["server_commands"] = server_commands;
}

std::vector<ConnectionOptions> first(const std::vector<ConnectionOptions>& all, std::size_t n) {
  return {all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n)};
}

// ---- the floors ---------------------------------------------------------------

void floor_cycle(benchmark::State& state, ConnectionOptions node) {
  std::string why;
  auto context = locklab::bench::raw_connect(node.endpoint, why);
  if (!context) return fail(state, why);
  const std::string key = "locklab:bench:floor";
  ServerCommands served({node});
  for (auto _ : state) {
    auto set = locklab::bench::raw_command(context.get(), {"SET", key, "t", "NX", "PX", kTtlMs});
    if (!set || set->type != REDIS_REPLY_STATUS) return fail(state, "raw SET NX PX was not OK");
    auto del = locklab::bench::raw_command(context.get(), {"DEL", key});
    if (!del || del->type != REDIS_REPLY_INTEGER || del->integer != 1) return fail(state, "raw DEL did not delete");
  }
  set_counters(state, 2, 2, served.per_cycle(state.iterations()));
}

void fanout_floor(benchmark::State& state, std::vector<ConnectionOptions> nodes) {
  std::vector<locklab::bench::RawContext> contexts;
  for (const auto& node : nodes) {
    std::string why;
    contexts.push_back(locklab::bench::raw_connect(node.endpoint, why));
    if (!contexts.back()) return fail(state, why);
  }
  const std::string key = "locklab:bench:fanout-floor";
  ServerCommands served(nodes);
  for (auto _ : state) {
    auto set = locklab::bench::raw_fan_out(contexts, {"SET", key, "t", "NX", "PX", kTtlMs});
    if (!set) return fail(state, "raw fan-out SET NX PX failed");
    for (const auto& reply : *set)
      if (reply->type != REDIS_REPLY_STATUS) return fail(state, "a node refused SET NX PX");
    auto del = locklab::bench::raw_fan_out(contexts, {"DEL", key});
    if (!del) return fail(state, "raw fan-out DEL failed");
  }
  const auto n = static_cast<double>(nodes.size());
  set_counters(state, 2, 2 * n, served.per_cycle(state.iterations()));
}

// ---- the locks ----------------------------------------------------------------

void acquire_release(benchmark::State& state, const locklab::Generation& generation, locklab::LockConfig config) {
  auto made = generation.make(config);
  if (!made) return fail(state, made.error().message);
  auto& lock = *made.value();
  // Warm-up outside the count: connect, load scripts (once per connection).
  if (!expect_outcome(state, lock.try_acquire(0ms), locklab::Acquire::acquired, "warm-up acquire")) return;
  if (!expect_outcome(state, lock.release(), locklab::Release::released, "warm-up release")) return;

  ServerCommands served(config.servers);
  const auto before = locklab::redis::traffic();
  for (auto _ : state) {
    if (!expect_outcome(state, lock.try_acquire(0ms), locklab::Acquire::acquired, "uncontended acquire") ||
        !expect_outcome(state, lock.release(), locklab::Release::released, "release of our own hold")) {
      std::fprintf(stderr, "lock_bench: %s: %s\n", generation.name.c_str(), lock.last_error().c_str());
      return;
    }
  }
  const auto after = locklab::redis::traffic();
  const double cycles = static_cast<double>(state.iterations());
  set_counters(state, static_cast<double>(after.round_trips - before.round_trips) / cycles,
               static_cast<double>(after.commands - before.commands) / cycles, served.per_cycle(state.iterations()));
}

// ---- the harness's own overhead -------------------------------------------------

void raw_get_set(benchmark::State& state, ConnectionOptions node) {
  std::string why;
  auto context = locklab::bench::raw_connect(node.endpoint, why);
  if (!context) return fail(state, why);
  const std::string key = "locklab:bench:raw-counter";
  long long value = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();  // manual time, like client-loop's
    auto got = locklab::bench::raw_command(context.get(), {"GET", key});
    if (!got) return fail(state, "raw GET failed");
    auto set = locklab::bench::raw_command(context.get(), {"SET", key, std::to_string(++value)});
    if (!set || set->type != REDIS_REPLY_STATUS) return fail(state, "raw SET failed");
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  set_counters(state, 2, 2, 2);
}

// One `locklab run` (1 client, thread mode, no-lock, hold 0) of `ops` attempts;
// the iteration's time is the run's time per acquisition (barrier to the last
// client done), so it lines up with raw-get-set's time per GET + SET.
void client_loop(benchmark::State& state, ConnectionOptions node, std::int64_t ops) {
  locklab::harness::RunOptions options;
  options.lock = "no-lock";
  options.clients = 1;
  options.mode = locklab::harness::ClientMode::thread;
  options.ops = ops;
  options.hold_ms = 0;
  options.redis = {node.endpoint};
  options.key = "locklab:bench:client-loop";
  for (auto _ : state) {
    auto document = locklab::harness::measure(options);
    if (!document) return fail(state, document.error().message);
    const double acquired = (*document)["totals"]["acquired"].get<double>();
    if (acquired <= 0) return fail(state, "the no-lock client loop acquired nothing");
    state.SetIterationTime((*document)["duration_s"].get<double>() / acquired);
    set_counters(state, (*document)["cost"]["round_trips_per_acquisition"].get<double>(),
                 (*document)["cost"]["commands_sent_per_acquisition"].get<double>(),
                 (*document)["cost"]["server_commands_per_acquisition"].is_number()
                     ? (*document)["cost"]["server_commands_per_acquisition"].get<double>()
                     : 0.0);
  }
}

// A reference for an adapter's no-op round trip, not a bound (a probe on
// busier cores can come out under it): the cheapest program that answers a
// line, `cat`, spawned as AdapterLock spawns an adapter (a socket pair as its
// stdin and stdout), and the loop of AdapterLock::ask: dump the request, send
// it, read the line, parse it, check its id. docs/adapters.md ("The round
// trip") quotes adapters against it.
void echo_floor(benchmark::State& state) {
  auto spawned = locklab::harness::AdapterProcess::spawn({"cat"}, "echo-floor", 1s);
  if (!spawned) return fail(state, spawned.error().message);
  auto& echo = *spawned;
  std::vector<std::int64_t> round_trips_ns;
  long long id = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const nlohmann::json request{{"id", ++id}, {"type", "noop"}};
    if (auto sent = echo.send_line(request.dump() + "\n"); !sent) return fail(state, sent.error().message);
    auto line = echo.read_line(2000ms);
    if (!line) return fail(state, "cat: " + line.error().message);
    const auto reply = nlohmann::json::parse(*line, nullptr, false);
    if (reply.is_discarded() || reply.value("id", -1LL) != id) return fail(state, "cat echoed another line");
    round_trips_ns.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  }
  // The harness's nearest-rank rule, as the adapters' probes report theirs.
  state.counters["p50_us"] = static_cast<double>(locklab::harness::percentile(round_trips_ns, 50)) / 1000.0;
  state.counters["p99_us"] = static_cast<double>(locklab::harness::percentile(round_trips_ns, 99)) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  auto servers = locklab::bench::start(&argc, argv, kMasters, "lock_bench");
  if (!servers) return 1;
  const auto all = locklab::bench::endpoints(*servers);
  auto name = [](const std::string& what, std::size_t nodes) {
    return "BM_Cycle/" + what + "/nodes:" + std::to_string(nodes);
  };

  benchmark::RegisterBenchmark(name("floor", 1).c_str(), floor_cycle, all.front())->Unit(benchmark::kMicrosecond);
  for (std::size_t n : {1, 3, 5})
    benchmark::RegisterBenchmark(name("fanout-floor", n).c_str(), fanout_floor, first(all, n))
        ->Unit(benchmark::kMicrosecond);

  for (const auto& generation : locklab::generations()) {
    locklab::LockConfig config;
    config.key = "locklab:bench:" + generation.name;
    config.ttl = 10s;  // a watchdog renews every ttl/3: none inside a short benchmark
    // Redlock's per-node timeout, scaled from the ttl, is short; a loaded 2-core
    // machine can stall a node longer than that, which would end the benchmark.
    config.node_timeout = 1s;
    std::vector<std::size_t> node_counts{1};
    if (generation.capabilities.multi_node) node_counts = {1, 3, 5};
    for (std::size_t n : node_counts) {
      config.servers = generation.capabilities.uses_redis ? first(all, n) : std::vector<ConnectionOptions>{};
      benchmark::RegisterBenchmark(name(generation.name, generation.capabilities.uses_redis ? n : 0).c_str(),
                                   acquire_release, std::cref(generation), config)
          ->Unit(benchmark::kMicrosecond);
    }
  }

  // Both on manual time; Google Benchmark names them .../clients:1/manual_time and
  // .../clients:1/iterations:1/manual_time (one run of 2000 attempts).
  benchmark::RegisterBenchmark("BM_Harness/raw-get-set/clients:1", raw_get_set, all.front())
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Harness/client-loop/clients:1", client_loop, all.front(), std::int64_t{2000})
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Adapter/echo-floor", echo_floor)->Unit(benchmark::kMicrosecond);
  return locklab::bench::run_all();
}
