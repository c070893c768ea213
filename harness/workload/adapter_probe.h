// The adapter's own cost, measured once per run before its clients start
// (docs/adapters.md, "In a run"): the coordinator spawns the adapter once,
// checks its init_ok (a shipped adapter must claim exactly the capabilities
// its catalog entry declares), and times a few hundred noop round trips. The
// run document and the comparison report show it beside the lock; it is
// subtracted from nothing.
#pragma once

#include <set>
#include <string>

#include "history/metrics.h"
#include "lock.h"
#include "redis/result.h"
#include "workload/adapter_lock.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {

inline constexpr int kProbeNoops = 300;

struct AdapterProbe {
  AdapterIdentity identity;       // library, version, language, as init_ok said them
  std::set<std::string> claimed;  // the capability words init_ok said are true
  Quantiles noop_us;              // the noop round trips, µs
};

// Spawns `lock`'s adapter with `config` (the coordinator's own servers) as
// client `client`, checks it and times `noops` noops. An Error is one line
// naming the adapter and what it did (or what it claimed against the catalog).
Result<AdapterProbe> probe_adapter(const LockDescription& lock, const LockConfig& config, int client,
                                   int noops = kProbeNoops);

}  // namespace locklab::harness
