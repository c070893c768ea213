// What a fault may know of the run it acts in: the few run options its
// factory checks or sizes itself by. The fault code sees this, not RunOptions,
// so the nemesis layer does not depend on the run layer above it
// (docs/architecture.md); run/options.h builds it with fault_env().
#pragma once

#include <cstdint>
#include <string>

namespace locklab::harness {

struct FaultEnv {
  int clients = 1;              // --clients: client=N must be below it
  bool thread_clients = false;  // --mode thread: a thread cannot be paused or killed alone
  int ttl_ms = 0;               // --ttl: patience and pause bounds scale with it
  int wait_ms = 0;              // --wait
  std::uint64_t seed = 0;       // --seed: random:count=K draws from it
  std::string lock;             // --lock: which servers a topology fault acts on
  int nodes = 1;                // --nodes of a multi-node lock
  int wait_replicas = 0;        // --wait-replicas
};

}  // namespace locklab::harness
