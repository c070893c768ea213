// The parameters of the node faults (nemesis/node_faults.h): where, when and
// how long a parked holder waits, and the words that catch or split the
// contenders' requests; each parsed from the fault's spec, or one line of why
// not. One job: read and check the words; the faults act on them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "redis/result.h"

#include "nemesis/fault_env.h"
#include "nemesis/fault_spec.h"
#include "nemesis/nemesis.h"
#include "nemesis/split_votes.h"
#include "servers/resp_watch.h"

namespace locklab::harness {

// Where and when a fault parks its holder (warm-up= and park=, holder_park_param): at
// locklab:cs-enter, before its read of the resource, or (park=read) at locklab:cs-read, once its
// read was accepted; and only after N acquisitions (warm-up=N, GatedFault::start_warm_up).
struct HolderPark {
  std::int64_t warm_up = 0;
  std::string_view point = kCsEnter;
};

// holder-nodes=M: the first holder reaches only nodes [0, M) (a bare majority: N/2+1).
Result<std::size_t> holder_nodes_param(const FaultSpec& spec, std::size_t servers);
// patience=MS: how long a parked holder waits for a contender, then the contender for it.
Result<std::chrono::milliseconds> patience_param(const FaultSpec& spec, const FaultEnv& options);
// warm-up=N and park=enter|read.
Result<HolderPark> holder_park_param(const FaultSpec& spec, const FaultEnv& options);
// catch=PATTERN (nemesis/caught_waiters.h), with when=holder.
Result<std::optional<RespPattern>> catch_param(const FaultSpec& spec, const FaultEnv& options, bool at_start);
// split=PATTERN (nemesis/split_votes.h), with when=start.
Result<std::optional<SplitVotes>> split_param(const FaultSpec& spec, const FaultEnv& options, bool at_start,
                                              std::size_t nodes, std::size_t servers);
// How long the catch waits for every waiter's request.
std::chrono::milliseconds catch_bound(const FaultEnv& options, std::chrono::milliseconds patience);
// Why a catch's bound is too short to catch anyone, or nothing.
std::optional<Error> catch_too_short(const FaultSpec& spec, const FaultEnv& options, std::chrono::milliseconds patience,
                                     bool catches);

}  // namespace locklab::harness
