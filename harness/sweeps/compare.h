// `locklab compare`: every registered generation through the same workload,
// one JSON per run plus the report, and the counter-demo table on stdout.
#pragma once

#include <string>
#include <vector>

#include "redis/result.h"

#include "run/run.h"
#include "support/run_id.h"

namespace locklab::harness {

struct CompareOptions {
  bool quick = false;               // ~1 s per generation (CI)
  std::string out;                  // empty = results/runs/<run-id>
  std::vector<std::string> locks;   // empty = every generation in the registry
  RunOptions base;                  // the shared workload (lock is set per run)
};

// The default workload of the comparison: RunOptions' defaults (8 process
// clients, 3 s, hold 1 ms, ttl 2 s: hold << ttl so the TTL generations are safe
// when nothing fails), with `quick` shortened to kQuickDurationS.
RunOptions default_compare_workload(bool quick);

// What a comparison produced. A run that could not measure is a finding, not a
// stop: its error is printed and the others still run.
struct CompareSummary {
  std::string dir;      // where the documents and the report are
  int runs = 0;         // documents written
  int failed_runs = 0;  // could not run, could not be written, or verdict "error"
};

// An Error means the comparison could not happen at all: ErrorKind::usage for
// bad options (an unknown lock, invalid workload), anything else for a failure
// (no generation registered, the output directory or the report cannot be written).
Result<CompareSummary> compare(const CompareOptions& options);

}  // namespace locklab::harness
