// The adapter's own cost, measured once per run before its clients start
// (docs/adapters.md, "In a run"): the coordinator spawns the adapter once,
// checks its init_ok (a shipped adapter must claim exactly the capabilities
// its catalog entry declares; one that is not shipped is then described by
// it), takes the lock once to check that the key the harness will read for it
// is on the lock's servers while held, and times a few hundred noop round
// trips. The run document and the
// comparison report show it beside the lock; it is subtracted from nothing.
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "redis/result.h"

#include "lock.h"

#include "history/metrics.h"
#include "workload/adapter_lock.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {

inline constexpr int kProbeNoops = 300;

struct AdapterProbe {
  AdapterIdentity identity;       // library, version, language, as init_ok said them
  std::set<std::string> claimed;  // the capability words init_ok said are true
  Quantiles noop_us;              // the noop round trips, µs
  double start_ms = 0;            // from spawning the adapter to its init_ok (a runtime's start cost)
  bool acquired = false;          // its one acquire (before the run's clients) got the lock
  std::string run_key;            // the key init named (identity.key is what the adapter locks for it)
};

// Spawns `lock`'s adapter with `config` (the coordinator's own servers) as
// client `client`, checks it and times `noops` noops. An Error is one line
// naming the adapter and what it did (or what it claimed against the catalog:
// its capabilities, or a `key` other than the catalog's pattern gives; or a
// key that is not on the lock's servers, a majority of them, while it holds).
Result<AdapterProbe> probe_adapter(const LockDescription& lock, const LockConfig& config, int client,
                                   int noops = kProbeNoops);

// One adapter of a run, probed: the run document's record of it
// (`adapters[NAME]`: command, identity, capabilities, noop_us, start_ms; "error" when it
// failed) and the one line that makes the run `error` ("" = none).
struct ProbedAdapter {
  nlohmann::json record;
  std::string failure;
};
// probe_adapter() for a run's lock as client `client`. An adapter the catalog
// does not ship takes the capabilities its init_ok claims (with_claims); a
// lock whose key pattern nobody gave takes the key init_ok names, if any
// (docs/adapters.md, init_ok's `key`). `laid_out` is what the run's servers
// were started for.
ProbedAdapter probe_run_adapter(LockDescription& lock, const LockConfig& config, int client,
                                const Capabilities& laid_out);

}  // namespace locklab::harness
