// `counter_demo --serve`: seed 004 §11's setup as real HTTP services.
//
// `instances` child processes (fork), each an httplib server on its own
// loopback port with the article's endpoints, and one front on `port` that
// forwards each request to the next instance, round-robin (the article's
// gateway). Every instance has its own memory, so `local-mutex` is one mutex
// per instance, exactly as one `synchronized` per JVM.
//
//   GET /test     GET counter, gap, SET counter+1 through the lock (200; 503 if the lock was not taken)
//   GET /counter  the counter ("null" when missing)   -- the article's /getCount
//   GET /reset    SET counter 1
//
// SIGINT/SIGTERM stop the front, then the instances (SIGTERM, reaped); the
// caller's RedisServer objects then stop Redis. Instances also die with the
// parent (PR_SET_PDEATHSIG), so even a SIGKILLed front leaves no instance behind.
#pragma once

#include <string>
#include <vector>

#include "counter_request.h"

namespace locklab::scenarios {

struct ServeOptions {
  CounterSetup setup;
  int port = 8080;     // 0: any free port (printed)
  int instances = 3;
  std::vector<int> redis_pids;  // printed for whoever checks for orphans; empty with --redis
};

// Blocks until SIGINT or SIGTERM. Returns the process exit code (0 = stopped cleanly).
// Call it from the main thread before any other thread exists: it blocks the
// two signals for every thread it creates and waits for them itself.
int serve(const ServeOptions& options);

}  // namespace locklab::scenarios
