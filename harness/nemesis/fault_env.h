// What a fault may know of the run it acts in: the few run options its
// factory checks or sizes itself by. The fault code sees this, not RunOptions,
// so the nemesis layer does not depend on the run layer above it
// (docs/architecture.md); run/options.h builds it with fault_env().
#pragma once

#include <cstdint>
#include <string>

#include "registry.h"

namespace locklab::harness {

struct FaultEnv {
  int clients = 1;              // --clients: client=N must be below it
  bool thread_clients = false;  // --mode thread: a thread cannot be paused or killed alone
  int ttl_ms = 0;               // --ttl: patience and pause bounds scale with it
  int wait_ms = 0;              // --wait
  std::uint64_t seed = 0;       // --seed: random:count=K draws from it
  std::string lock;             // --lock (or the fleet): named in a fault's errors
  // What the run's lock can (a fleet: uses_redis and multi_node if any member's
  // does): which servers a topology fault acts on. Handed down by the run from
  // its lock catalog (workload/lock_catalog.h), so no fault looks a lock up by name.
  Capabilities capabilities;
  int nodes = 1;                // --nodes of a multi-node lock
  int wait_replicas = 0;        // --wait-replicas
  int hosts = 1;                // --hosts: the other hosts' clients contend too
  bool cluster = false;         // --cluster: no per-client links (catch= cannot park at them)
};

}  // namespace locklab::harness
