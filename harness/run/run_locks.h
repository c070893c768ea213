// The locks of one run at work (run/options.h: run_locks()): which lock each
// client makes, the description the document names, and what a mixed fleet
// adds: the document's `fleet` block (per lock, its clients' counts) and its
// judgment (docs/harness.md, "Fleets"). The adapters' probe before the
// clients start is workload/adapter_probe.h's.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lock.h"

#include "history/checker.h"
#include "history/history.h"
#include "run/options.h"

namespace locklab::harness {

// Client i's lock: the make of the run lock whose clients include i.
std::function<LockResult(const LockConfig&, int client)> client_lock_maker(const std::vector<RunLock>& locks);

// The Redis key client i's lock holds for the run's key (locked_key(): a
// library may lock "mutex:K"), by client; "" where nobody named it.
std::vector<std::string> client_keys(const std::vector<RunLock>& locks, const std::string& key);

// The description the document names: the one lock, or a fleet's ("fleet",
// its members in the summary, run_capabilities()).
LockDescription run_description(const std::vector<RunLock>& locks);

// The document's `fleet`: per lock, its clients and their counts; null for one lock.
nlohmann::json fleet_json(const std::vector<RunLock>& locks, const RunOptions& options, const SharedHistory& history);

// A fault-free fleet whose lock failed against the shared key (a WRONGTYPE, a
// value it cannot read) cannot share it: the verdict is error, one reason per
// such lock, naming its last error.
void judge_fleet(Verdict& verdict, const std::vector<RunLock>& locks, const RunOptions& options,
                 const SharedHistory& history, bool faults_injected);

}  // namespace locklab::harness
