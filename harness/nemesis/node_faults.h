// The faults that need a topology (docs/faults.md, "Topology faults"): they act
// on the lock servers and on the network between them and the clients, which
// measure() lays out for them from their FaultNeeds (servers/lock_server_layout.h).
//
//   failover     master + replica (replication through a proxy): the holder's lock is
//                acknowledged but not replicated, the master dies, the replica is promoted
//   node-crash   SIGKILL K lock servers (the holder's first), restarted empty now, after
//                the TTL, or never
//   node-pause   SIGSTOP K lock servers (timeouts), resumed after MS or at the end
//   clock-jump   one lock server's wall clock jumps (the clock shim) while a holder is inside
//   net, unavailable  on the network: nemesis/network_faults.h
//
// A fault that needs the holder to stay inside while the world changes around
// it parks the holder at a step point (alive: a watchdog keeps running) until
// the coordinator has done its part and the condition of the story holds
// (another client acquired), always within a bound (cross_process_gate.h). What they
// share is nemesis/topology_fault.h.
#pragma once

#include <memory>

#include "redis/result.h"

#include "nemesis/fault.h"
#include "nemesis/fault_env.h"
#include "nemesis/fault_spec.h"

namespace locklab::harness {

Result<std::unique_ptr<Fault>> make_failover_fault(const FaultSpec& spec, const FaultEnv& options);
Result<std::unique_ptr<Fault>> make_node_crash_fault(const FaultSpec& spec, const FaultEnv& options);
Result<std::unique_ptr<Fault>> make_node_pause_fault(const FaultSpec& spec, const FaultEnv& options);
Result<std::unique_ptr<Fault>> make_clock_jump_fault(const FaultSpec& spec, const FaultEnv& options);

}  // namespace locklab::harness
