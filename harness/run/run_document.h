// Results: one JSON document per run ("schema": "locklab.run/2", documented in
// docs/harness.md): the schema's required keys, the document built from what a
// run saw, written atomically so a reader never sees half a file, and loaded back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/result.h"

#include "history/checker.h"
#include "history/metrics.h"
#include "run/options.h"
#include "support/files.h"
#include "workload/lock_catalog.h"
#include "workload/workload.h"

namespace locklab::harness {

// /2 added each fault record's "bit" and "bite" (docs/harness.md, "Bite");
// /1 documents are still read (report, merge, index): their faults are not judged for a bite.
inline constexpr const char* kRunSchema = "locklab.run/2";
inline constexpr const char* kRunSchemaV1 = "locklab.run/1";

// Everything the clients counted, summed over their slots.
struct Tally {
  std::int64_t attempts = 0, acquired = 0, timeouts = 0, errors = 0, unknown = 0, release_errors = 0;
  std::int64_t stale = 0, counter_errors = 0, round_trips = 0, commands = 0, leases_lost = 0;
  std::int64_t blocked_calls = 0, blocked_longest_ms = 0;  // library calls still waiting past the bound
  std::int64_t blocked_acquires = 0;  // of blocked_calls, acquires (each counted in unknown)
  std::string blocked_what;                                 // the adapter's line for the longest
  std::optional<NodeTally> nodes;
  bool truncated = false;
  std::vector<std::int64_t> per_client, open_waits;
  // Per client: an acquire of its timed out, or it stopped while still
  // waiting -- it was kept out at some point (the deadlock evidence, checker.h).
  std::vector<bool> kept_out;
  std::vector<ClientSpan> spans;
  std::string last_error;
};

// Where the run's servers were, as the document records them.
struct ServerFacts {
  std::vector<std::string> lock_endpoints;
  std::string counter_endpoint;
  bool counter_shared = false;  // the counter lives on a lock server
  std::string version;          // of the first lock server (the counter's when there is none)
  nlohmann::json cluster = nullptr;  // --cluster: masters, the keys' slots (run_cluster.h)
};

// From a moment that freed the lock to the next acquisition by anyone (the
// longest such window when there were several): a client's crash, or the
// servers losing a holder's key under it (a fault's reading, nemesis/bite.h:
// the lock is free from then on, so a lock that keeps everyone out after it,
// a hold nobody acquired, shows here). open: nobody acquired again before the
// run ended.
struct Unavailability {
  std::optional<double> ms;  // nullopt: nothing freed the lock
  bool open = false;
};
Unavailability unavailability_after(const std::vector<std::int64_t>& freed_ns, const std::vector<CsRecord>& by_enter,
                                    std::int64_t end_ns);

// What one run saw, gathered by measure() for the document.
struct Findings {
  const LockDescription& lock;  // the run's lock, or its fleet (run/run_locks.h: run_description)
  const ServerFacts& servers;
  const WorkloadOutcome& outcome;
  const Tally& tally;
  const std::vector<CsRecord>& records;
  const Safety& safety;
  const Verdict& verdict;
  const Metrics& metrics;
  std::int64_t confirmed = 0;
  std::optional<std::int64_t> counter_final;
  std::optional<std::int64_t> served;
  std::string nemesis;
  nlohmann::json faults = nlohmann::json::array();  // one record per --fault (fault.h)
  Unavailability unavailability;
  nlohmann::json adapters = nlohmann::json::object();  // lock name -> its adapter's probe (run/run_locks.h)
  nlohmann::json fleet = nullptr;                      // --fleet: per lock, its clients' counts
};

// The run's locklab.run/2 document.
nlohmann::json run_document(const RunOptions& options, const Findings& findings);

// Keys (JSON pointers) every run document must carry.
const std::vector<std::string>& required_run_keys();
// The required keys missing from `document` (empty = valid), plus a schema check.
std::vector<std::string> missing_run_keys(const nlohmann::json& document);

// Reads and validates one run document; an Error names the file and the problem.
Result<nlohmann::json> load_run(const std::string& path);
// load_run() of each path, in order; the first that fails is the Error.
Result<std::vector<nlohmann::json>> load_runs(const std::vector<std::string>& paths);

}  // namespace locklab::harness
