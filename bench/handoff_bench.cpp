// What was reentrant_watchdog_test's DISABLED_MeasureHandoffAndRoundTripsPerAcquisition:
// generation 5 wakes a blocked waiter by PUBLISH, generation 4 makes it poll
// every retry_interval (its default). Two figures per generation:
//
//   BM_Handoff/<gen>/clients:2     from the holder's release() call to the blocked waiter's
//                     try_acquire returning (manual time: only that stretch)
//   BM_Contention/<gen>/clients:4  4 threads x 25 acquisitions, 1 ms hold; counters: round
//                     trips and commands per acquisition (release included)
//
//   build/default/bench/handoff_bench --benchmark_min_time=0.5
#include <thread>

#include "bench_support.h"
#include "registry.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using locklab::Acquire;
using locklab::Release;
using locklab::bench::expect_outcome;
using locklab::bench::fail;

std::unique_ptr<locklab::DistributedLock> make(benchmark::State& state, const std::string& generation,
                                               const locklab::LockConfig& config) {
  auto made = locklab::make_lock(generation, config);
  if (!made) {
    fail(state, made.error().message);
    return nullptr;
  }
  return std::move(made).value();
}

void handoff(benchmark::State& state, const std::string& generation, locklab::LockConfig config) {
  auto holder = make(state, generation, config);
  auto waiter = make(state, generation, config);
  if (!holder || !waiter) return;
  for (auto _ : state) {
    if (!expect_outcome(state, holder->try_acquire(0ms), Acquire::acquired, "holder")) return;
    Acquire waited = Acquire::error;
    Release waiter_released = Release::error;
    Clock::time_point acquired_at;
    std::thread blocked([&] {
      waited = waiter->try_acquire(5s);
      acquired_at = Clock::now();
      if (waited == Acquire::acquired) waiter_released = waiter->release();
    });
    std::this_thread::sleep_for(20ms);  // the waiter is parked by now (subscribed or polling)
    const auto released_at = Clock::now();
    const Release released = holder->release();
    blocked.join();
    if (!expect_outcome(state, released, Release::released, "holder") ||
        !expect_outcome(state, waited, Acquire::acquired, "blocked waiter") ||
        !expect_outcome(state, waiter_released, Release::released, "waiter"))
      return;
    state.SetIterationTime(std::chrono::duration<double>(acquired_at - released_at).count());
  }
}

void contention(benchmark::State& state, const std::string& generation, locklab::LockConfig config) {
  constexpr int kThreads = 4, kRounds = 25;
  std::uint64_t round_trips = 0, commands = 0;
  for (auto _ : state) {
    std::atomic<int> wrong{0};
    const auto before = locklab::redis::traffic();
    std::vector<std::thread> clients;
    for (int t = 0; t < kThreads; ++t)
      clients.emplace_back([&] {
        auto made = locklab::make_lock(generation, config);
        if (!made) {
          wrong.fetch_add(1);
          return;
        }
        auto& lock = *made.value();
        for (int round = 0; round < kRounds; ++round) {
          if (lock.try_acquire(10s) != Acquire::acquired) {
            wrong.fetch_add(1);
            return;
          }
          std::this_thread::sleep_for(1ms);
          if (lock.release() != Release::released) wrong.fetch_add(1);
        }
      });
    for (auto& client : clients) client.join();
    const auto after = locklab::redis::traffic();
    if (wrong.load() > 0) {
      fail(state, std::to_string(wrong.load()) + " acquisitions or releases had the wrong outcome");
      return;
    }
    round_trips += after.round_trips - before.round_trips;
    commands += after.commands - before.commands;
  }
  const double acquisitions = static_cast<double>(state.iterations()) * kThreads * kRounds;
  state.counters["round_trips"] = static_cast<double>(round_trips) / acquisitions;
  state.counters["commands"] = static_cast<double>(commands) / acquisitions;
}

}  // namespace

int main(int argc, char** argv) {
  auto servers = locklab::bench::start(&argc, argv, 1, "handoff_bench");
  if (!servers) return 1;
  for (const std::string generation : {"lua-safe-delete", "reentrant-watchdog", "fair-queue"}) {
    locklab::LockConfig config;
    config.key = "locklab:bench:handoff:" + generation;
    config.ttl = 10s;
    config.servers = locklab::bench::endpoints(*servers);
    benchmark::RegisterBenchmark(("BM_Handoff/" + generation + "/clients:2").c_str(), handoff, generation, config)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_Contention/" + generation + "/clients:4").c_str(), contention, generation, config)
        ->Unit(benchmark::kMillisecond);
  }
  return locklab::bench::run_all();
}
