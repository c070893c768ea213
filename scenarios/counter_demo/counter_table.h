// The in-process run of seed 004 §11's experiment: `requests` requests with at
// most `concurrency` in flight (ab -n100 -c50), spread round-robin over
// `instances` service instances, each request doing GET → gap → SET through
// its instance's lock; then the counter is read back and compared with
// 1 + requests.
//
// In one process, an "instance" is a lock domain. For the Redis generations
// every instance names the same key, so one Redis key excludes them all. For
// local-mutex, LocalMutexLock keeps one mutex per key in this process, so each
// instance gets its own key and therefore its own mutex object: three
// instances = three distinct mutexes, as three JVMs each have their own
// `synchronized` monitor. (`counter_demo --serve` runs real instance processes.)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "counter_request.h"

namespace locklab::scenarios {

struct DemoRow {
  std::string label;      // "local mutex, 3 instances"
  std::string lock_name;  // registry name
  int instances = 1;
  std::string article;    // what seed 004 reports ("58"), or "-" when it did not run this
  bool lesson_loses_updates = false;  // the lesson: this row loses updates (else: exactly 1 + requests)
};

struct DemoLoad {
  int requests = 100;
  int concurrency = 50;
};

struct RowResult {
  long long expected = 0;
  long long got = -1;  // -1: the counter could not be read
  std::size_t incremented = 0, lock_not_taken = 0, failed = 0;
  bool as_lesson = false;
};

// Seed 004's three runs, then one row per Redis generation. `only` = one lock name.
std::vector<DemoRow> demo_rows(const std::string& only);

// Resets the counter to 1, runs the load, reads the counter back.
RowResult run_row(const CounterSetup& base, const DemoRow& row, const DemoLoad& load);

}  // namespace locklab::scenarios
