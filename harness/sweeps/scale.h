// `locklab scale`: every chosen generation at every client count (1, 2, 4 ...
// 64), acquisitions/s against clients, and what the harness itself cost in CPU
// (the coordinator, the client processes, the Redis servers, each as a share
// of wall time x cores), so a flat curve can be told apart from a saturated
// harness.
//
// The servers are started once for the whole sweep (5 lock masters and a
// counter server of their own) and handed to each run as --redis, so the CPU
// the coordinator's children used (getrusage RUSAGE_CHILDREN: the reaped
// client processes) is the clients' alone, and the servers' CPU is read from
// their INFO cpu.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/result.h"

#include "report/scale_report.h"
#include "run/run.h"

namespace locklab::harness {

struct ScaleOptions {
  std::vector<std::string> locks;                  // empty = every generation that uses Redis
  std::vector<int> clients{1, 2, 4, 8, 16, 32, 64};
  RunOptions base;                                 // the shared workload (lock, clients, redis set per run)
  std::string out;                                 // empty = results/scale/<run-id>
};

// "1,2,4" -> {1, 2, 4}; nullopt (and `why`) unless every entry is a client
// count within bounds::clients.
std::optional<std::vector<int>> parse_client_counts(const std::string& text, std::string* why);

struct ScaleSummary {
  std::string dir;
  ScaleSweep sweep;
  int failed_runs = 0;
};

// Runs the sweep, writes <dir>/<lock>-c<clients>.json per run, scale.json,
// scale.md, scale.svg and scale.html (scale_report.h). ErrorKind::usage for bad options.
Result<ScaleSummary> scale(const ScaleOptions& options);

}  // namespace locklab::harness
