// What every locklab bench binary shares: its own redis-servers, and a failure
// that ends the binary non-zero (Google Benchmark 1.7 exits 0 after
// SkipWithError, so a wrong lock outcome would otherwise pass as a smoke test).
#pragma once

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "lock.h"

#include "servers/redis_server.h"

namespace locklab::bench {

inline std::atomic<bool>& any_failure() {
  static std::atomic<bool> failed{false};
  return failed;
}

// Ends this benchmark with `why` and marks the binary failed. Main thread only
// (benchmark::State is not thread-safe): worker threads collect, then report.
inline void fail(benchmark::State& state, const std::string& why) {
  any_failure().store(true);
  state.SkipWithError(why.c_str());
}

// True when the outcome is the expected one; otherwise fails the benchmark.
inline bool expect_outcome(benchmark::State& state, Release got, Release want, const char* what) {
  if (got == want) return true;
  fail(state, std::string(what) + ": release returned " + to_string(got) + ", expected " + to_string(want));
  return false;
}
inline bool expect_outcome(benchmark::State& state, Acquire got, Acquire want, const char* what) {
  if (got == want) return true;
  fail(state, std::string(what) + ": try_acquire returned " + to_string(got) + ", expected " + to_string(want));
  return false;
}

inline std::vector<redis::ConnectionOptions> endpoints(const harness::ServerList& servers) {
  std::vector<redis::ConnectionOptions> result;
  for (const auto& server : servers) result.push_back(server->connection_options());
  return result;
}

// benchmark::Initialize + our servers; returns nullopt (after a one-line
// message) when they cannot start.
inline std::optional<harness::ServerList> start(int* argc, char** argv, std::size_t masters, const char* name) {
  benchmark::Initialize(argc, argv);
  if (benchmark::ReportUnrecognizedArguments(*argc, argv)) std::exit(2);
  auto servers = harness::start_masters(masters);
  if (!servers) {
    std::fprintf(stderr, "%s: %s\n", name, servers.error().message.c_str());
    return std::nullopt;
  }
  return std::move(servers).value();
}

// Runs what was registered; the exit code tells ctest whether every outcome was right.
inline int run_all() {
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return any_failure().load() ? 1 : 0;
}

}  // namespace locklab::bench
