// One measured run: servers up, workload, checker, metrics, one JSON document.
// Shared by `locklab run` and `locklab compare`.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nemesis.h"
#include "redis/connection.h"
#include "workload.h"

namespace locklab::harness {

struct RunOptions {
  std::string lock;
  int clients = 8;
  std::optional<std::int64_t> ops;  // nullopt: run for duration_s
  double duration_s = 3.0;
  int hold_ms = 1;
  int ttl_ms = 2000;
  int wait_ms = 1000;
  int retry_ms = 5;
  ClientMode mode = ClientMode::process;
  std::vector<redis::Endpoint> redis;          // empty: start our own servers
  std::optional<redis::Endpoint> counter_redis;  // with --redis: default = the first lock server
  int nodes = 5;                                 // multi-node generations without --redis
  int wait_replicas = 0;            // the failover guard (generations 4, 5); own servers: start this many replicas
  int wait_replicas_timeout_ms = 100;
  std::string key = "locklab:lock";
  std::uint64_t seed = 1;
  int stall_ms = 0;  // 0 = 3 x ttl (faults.md: deadlock = no acquire for k x TTL, k ~ 3)
  std::vector<StepAction> steps;
  std::vector<std::string> step_specs;  // as given, for the record
  bool progress = false;
  std::string json_path;  // recorded in config only; the caller writes
  std::string command;    // the command line that asked for this run, recorded for reproduction
  bool expect_safe = false;  // recorded in config only; the CLI decides the exit code
};

// A problem with the options themselves (exit 2), or nullopt.
std::optional<std::string> invalid_run_options(const RunOptions& options);

// The run's document. ErrorKind::usage = bad options (exit 2); anything else =
// the run could not happen (exit 1). A run that happened but could not judge
// (every attempt failed, clients had to be killed) returns a document whose
// verdict is "error".
Result<nlohmann::json> measure(const RunOptions& options, Nemesis* nemesis = nullptr);

// Parses "host:port[,host:port...]"; nullopt + *why when malformed.
std::optional<std::vector<redis::Endpoint>> parse_endpoints(const std::string& text, std::string* why);

// Sum of `calls` over INFO commandstats, minus INFO itself (our own probe).
std::optional<std::int64_t> parse_commandstats_calls(std::string_view info);

}  // namespace locklab::harness
