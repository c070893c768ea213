// Uncontended acquire + release, per generation, against real redis-server
// processes this binary starts (1 master; 5 for multi-node generations).
//
// Speed is noisy on small machines; the counters that noise does not move are
// reported beside it: round trips and commands per acquire+release pair.
//
//   build/default/bench/lock_bench --benchmark_min_time=0.2
//   build/default/bench/lock_bench --benchmark_filter=redlock
#include <benchmark/benchmark.h>

#include <cstdio>

#include "redis_server.h"
#include "registry.h"

namespace {

using namespace std::chrono_literals;
using locklab::harness::ServerList;

void acquire_release(benchmark::State& state, const locklab::Generation& generation, locklab::LockConfig config) {
  auto made = generation.make(config);
  if (!made) {
    state.SkipWithError(made.error().message.c_str());
    return;
  }
  auto& lock = *made.value();
  const auto before = locklab::redis::traffic();
  for (auto _ : state) {
    if (lock.try_acquire(0ms) != locklab::Acquire::acquired) {
      state.SkipWithError(("acquire failed: " + lock.last_error()).c_str());
      return;
    }
    const auto released = lock.release();
    benchmark::DoNotOptimize(released);
  }
  const auto after = locklab::redis::traffic();
  const double pairs = static_cast<double>(state.iterations());
  state.counters["round_trips"] = static_cast<double>(after.round_trips - before.round_trips) / pairs;
  state.counters["commands"] = static_cast<double>(after.commands - before.commands) / pairs;
}

std::vector<locklab::redis::ConnectionOptions> endpoints(const ServerList& servers) {
  std::vector<locklab::redis::ConnectionOptions> result;
  for (const auto& server : servers) result.push_back(server->connection_options());
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  auto servers = locklab::harness::start_masters(5);
  if (!servers) {
    std::fprintf(stderr, "lock_bench: %s\n", servers.error().message.c_str());
    return 1;
  }
  const auto all = endpoints(*servers);

  for (const auto& generation : locklab::generations()) {
    locklab::LockConfig config;
    config.key = "locklab:bench:" + generation.name;
    config.ttl = 10s;
    if (generation.capabilities.uses_redis)
      config.servers = generation.capabilities.multi_node ? all : std::vector{all.front()};
    benchmark::RegisterBenchmark(("acquire_release/" + generation.name).c_str(), acquire_release,
                                 std::cref(generation), config)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
