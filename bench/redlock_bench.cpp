// What was redlock_test's DISABLED_MeasureLatency: Redlock on 5 nodes as
// locklab does it (one fan-out: every node's request sent, then every reply
// awaited) against the same commands node after node (redlock-rb,
// redis-plus-plus, Redisson's RedLock style).
//
// Names (compare.py filters lines them up on /nodes:5):
//   BM_Redlock/fanout-floor/nodes:5   raw hiredis fan-out, SET NX PX then DEL (bench/raw_floor.h)
//   BM_Redlock/parallel/nodes:5       locklab's redlock (2 round trips, 10 commands)
//   BM_Redlock/sequential/nodes:5     the same commands node after node (10 round trips)
//
//   build/default/bench/redlock_bench --benchmark_min_time=0.5
#include "redis/connection.h"

#include "bench_support.h"
#include "raw_floor.h"
#include "registry.h"

namespace {

using namespace std::chrono_literals;
using locklab::bench::expect_outcome;
using locklab::bench::fail;

const std::string kKey = "locklab:bench:redlock";

void parallel(benchmark::State& state, locklab::LockConfig config) {
  auto made = locklab::make_lock("redlock", config);
  if (!made) {
    fail(state, made.error().message);
    return;
  }
  auto& lock = *made.value();
  const auto before = locklab::redis::traffic();
  for (auto _ : state) {
    if (!expect_outcome(state, lock.try_acquire(0ms), locklab::Acquire::acquired, "redlock")) return;
    if (!expect_outcome(state, lock.release(), locklab::Release::released, "redlock")) return;
  }
  const auto after = locklab::redis::traffic();
  const double cycles = static_cast<double>(state.iterations());
  state.counters["round_trips"] = static_cast<double>(after.round_trips - before.round_trips) / cycles;
  state.counters["commands"] = static_cast<double>(after.commands - before.commands) / cycles;
}

void sequential(benchmark::State& state, const std::vector<locklab::redis::ConnectionOptions>& nodes) {
  std::vector<locklab::redis::Connection> connections;
  for (const auto& node : nodes) {
    auto connection = locklab::redis::Connection::connect(node);
    if (!connection) {
      fail(state, connection.error().message);
      return;
    }
    connections.push_back(std::move(connection).value());
  }
  const auto before = locklab::redis::traffic();
  const std::string release_script =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
  for (auto _ : state) {
    for (auto& connection : connections) {
      auto taken = connection.command({"SET", kKey, "t", "NX", "PX", "10000"});
      if (!taken || !taken->is_status("OK")) {
        fail(state, "SET NX on a node was not OK");
        return;
      }
    }
    for (auto& connection : connections) {
      auto deleted = connection.command({"EVAL", release_script, "1", kKey, "t"});
      if (!deleted || !deleted->is_integer() || deleted->integer() != 1) {
        fail(state, "compare-and-delete on a node did not delete our key");
        return;
      }
    }
  }
  const auto after = locklab::redis::traffic();
  const double cycles = static_cast<double>(state.iterations());
  state.counters["round_trips"] = static_cast<double>(after.round_trips - before.round_trips) / cycles;
  state.counters["commands"] = static_cast<double>(after.commands - before.commands) / cycles;
}

void fanout_floor(benchmark::State& state, const std::vector<locklab::redis::ConnectionOptions>& nodes) {
  std::vector<locklab::bench::RawContext> contexts;
  for (const auto& node : nodes) {
    std::string why;
    contexts.push_back(locklab::bench::raw_connect(node.endpoint, why));
    if (!contexts.back()) return fail(state, why);
  }
  for (auto _ : state) {
    auto set = locklab::bench::raw_fan_out(contexts, {"SET", kKey + ":floor", "t", "NX", "PX", "10000"});
    if (!set) return fail(state, "raw fan-out SET NX PX failed");
    auto del = locklab::bench::raw_fan_out(contexts, {"DEL", kKey + ":floor"});
    if (!del) return fail(state, "raw fan-out DEL failed");
  }
  state.counters["round_trips"] = 2;
  state.counters["commands"] = 2 * static_cast<double>(nodes.size());
}

}  // namespace

int main(int argc, char** argv) {
  auto servers = locklab::bench::start(&argc, argv, 5, "redlock_bench");
  if (!servers) return 1;
  const auto nodes = locklab::bench::endpoints(*servers);
  locklab::LockConfig config;
  config.key = kKey;
  config.ttl = 10s;
  config.node_timeout = 1s;  // a loaded machine can stall a node past a short timeout
  config.servers = nodes;
  benchmark::RegisterBenchmark("BM_Redlock/fanout-floor/nodes:5", fanout_floor, nodes)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Redlock/parallel/nodes:5", parallel, config)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Redlock/sequential/nodes:5", sequential, nodes)->Unit(benchmark::kMicrosecond);
  return locklab::bench::run_all();
}
