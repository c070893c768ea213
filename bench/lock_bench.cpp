// Uncontended acquire + release, per generation, against real redis-server
// processes this binary starts (1 master; 5 for multi-node generations).
// (It also holds what was fenced_test's DISABLED_MeasureLatency: fenced on one
// node against lua-safe-delete, the lock it wraps.)
//
// Speed is noisy on small machines; the counters that noise does not move are
// reported beside it: round trips and commands per acquire+release pair.
//
//   build/default/bench/lock_bench --benchmark_min_time=0.2
//   build/default/bench/lock_bench --benchmark_filter=redlock
#include "bench_support.h"
#include "registry.h"

namespace {

using namespace std::chrono_literals;
using locklab::bench::expect_outcome;

void acquire_release(benchmark::State& state, const locklab::Generation& generation, locklab::LockConfig config) {
  auto made = generation.make(config);
  if (!made) {
    locklab::bench::fail(state, made.error().message);
    return;
  }
  auto& lock = *made.value();
  const auto before = locklab::redis::traffic();
  for (auto _ : state) {
    if (!expect_outcome(state, lock.try_acquire(0ms), locklab::Acquire::acquired, "uncontended acquire")) return;
    if (!expect_outcome(state, lock.release(), locklab::Release::released, "release of our own hold")) return;
  }
  const auto after = locklab::redis::traffic();
  const double pairs = static_cast<double>(state.iterations());
  state.counters["round_trips"] = static_cast<double>(after.round_trips - before.round_trips) / pairs;
  state.counters["commands"] = static_cast<double>(after.commands - before.commands) / pairs;
}

}  // namespace

int main(int argc, char** argv) {
  auto servers = locklab::bench::start(&argc, argv, 5, "lock_bench");
  if (!servers) return 1;
  const auto all = locklab::bench::endpoints(*servers);

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
  return locklab::bench::run_all();
}
