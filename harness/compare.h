// `locklab compare`: every registered generation through the same workload,
// one JSON per run plus the report, and the counter-demo table on stdout.
#pragma once

#include <string>
#include <vector>

#include "run.h"

namespace locklab::harness {

struct CompareOptions {
  bool quick = false;               // ~1 s per generation (CI)
  std::string out;                  // empty = results/runs/<run-id>
  std::vector<std::string> locks;   // empty = every generation in the registry
  RunOptions base;                  // the shared workload (lock is set per run)
};

// The default workload of the comparison (8 process clients, 3 s, hold 1 ms,
// ttl 2 s: hold << ttl so the TTL generations are safe when nothing fails).
RunOptions default_compare_workload(bool quick);

// Returns the process exit code: 0 when every run measured, 1 when one could
// not (its error is printed and the others still run), 2 for bad options.
int compare(const CompareOptions& options);

// "20261129T221500Z" (UTC), unique in `parent` (a suffix is added when taken).
std::string new_run_id(const std::string& parent);

}  // namespace locklab::harness
