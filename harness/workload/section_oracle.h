// What the workload tells an oracle outside the shared-memory history: each
// critical section's entry and exit, and when its access to the protected
// resource began and ended. The workload sees only this interface; the one
// implementation (the oracle Redis, run/redis_section_oracle.h) is chosen by the run.
//
// Every call is one event of the section, in order: enter, observe_read,
// observe_write (skipped when the write failed: its window stays open), leave.
// A failed call returns an Error: the oracle then misses an event, and the
// caller counts it (a run with oracle errors cannot be judged safe).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "redis/result.h"

namespace locklab::harness {

// One client's connection to the oracle (one per client: its events must not
// interleave with another client's on one connection).
class SectionOracle {
 public:
  virtual ~SectionOracle() = default;
  virtual Status enter() = 0;  // the client is inside (after acquire, before the resource)
  // Just before the section's read is sent: its token, if the lock has one.
  virtual Status observe_read(std::optional<std::uint64_t> token) = 0;
  // Just after the section's write came back, or the resource refused it
  // (refused: the read or the write was rejected as stale; nothing changed).
  virtual Status observe_write(bool refused) = 0;
  virtual Status leave() = 0;  // the work is done, before release
};

// The run's oracle: a client's connection (made in the client, after the fork)
// and the coordinator's hook for a client that died.
class SectionOracles {
 public:
  virtual ~SectionOracles() = default;
  virtual Result<std::unique_ptr<SectionOracle>> connect(int client) const = 0;
  // The coordinator reaped `client` (it crashed or was killed): the section it
  // died inside ends here, as the history ends it. Called in the coordinator.
  virtual Status client_died(int client) = 0;
};

}  // namespace locklab::harness
