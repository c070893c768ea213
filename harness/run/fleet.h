// The locks of one run at work (run/options.h: run_locks()): which lock each
// client makes, the adapters' probe before the clients start, and what the
// document says of them: the `adapters` block (each adapter's identity and
// no-op round trip) and the `fleet` block (per lock of a mixed fleet, its
// clients' counts), and the judgment a fleet adds (docs/harness.md, "Fleets").
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "history/checker.h"
#include "history/history.h"
#include "lock.h"
#include "run/options.h"

namespace locklab::harness {

// Client i's lock: the make of the run lock whose clients include i.
std::function<LockResult(const LockConfig&, int client)> client_lock_maker(const std::vector<RunLock>& locks);

// The description the document names: the one lock, or a fleet's ("fleet",
// its members in the summary, run_capabilities()).
LockDescription run_description(const std::vector<RunLock>& locks);

// Every adapter of the run, probed once by the coordinator (workload/adapter_probe.h).
struct AdapterProbes {
  nlohmann::json record = nlohmann::json::object();  // the document's `adapters`: lock name -> its probe
  std::string failure;                               // the first adapter that failed, one line ("" = none)
};
// Probes each adapter of `locks` with `config` (the coordinator's servers, the
// key, the lease). An adapter that is not shipped gets the capabilities its
// init_ok claims (with_claims); `laid_out` is what the servers were started for.
AdapterProbes probe_adapters(std::vector<RunLock>& locks, const LockConfig& config, const Capabilities& laid_out);

// The document's `fleet`: per lock, its clients and their counts; null for one lock.
nlohmann::json fleet_json(const std::vector<RunLock>& locks, const RunOptions& options, const SharedHistory& history);

// A fault-free fleet whose lock failed against the shared key (a WRONGTYPE, a
// value it cannot read) cannot share it: the verdict is error, one reason per
// such lock, naming its last error.
void judge_fleet(Verdict& verdict, const std::vector<RunLock>& locks, const RunOptions& options,
                 const SharedHistory& history, bool faults_injected);

}  // namespace locklab::harness
