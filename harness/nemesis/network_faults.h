// The topology faults on the network between the clients and the lock servers
// (docs/faults.md, "Topology faults"; the node faults are nemesis/node_faults.h):
//
//   net          one client's links cut, held, delayed or dropped at acquire, while held,
//                or at release
//   unavailable  Redis refuses, or applies the request and loses the reply, at acquire
//                or at release: an unknown outcome, never "not held"
#pragma once

#include <memory>

#include "redis/result.h"

#include "nemesis/fault.h"
#include "nemesis/fault_env.h"
#include "nemesis/fault_spec.h"

namespace locklab::harness {

Result<std::unique_ptr<Fault>> make_net_fault(const FaultSpec& spec, const FaultEnv& options);
Result<std::unique_ptr<Fault>> make_unavailable_fault(const FaultSpec& spec, const FaultEnv& options);

}  // namespace locklab::harness
