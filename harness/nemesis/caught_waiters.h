// node-crash:...:catch=PATTERN and failover:...:catch=PATTERN -- the fault
// catches every waiter's request.
//
// Whether a waiter's acquire was on its way when the server went is an
// interleaving, not the lock, and some libraries answer the two cases apart:
// Redisson waits out its 3 s command timeout for a request the crash
// swallowed, where a waiter between two attempts takes the empty server at
// once; node-redis rejects a command in flight when its socket fails, and
// simple-redis-mutex's attempt() has no catch for it (the service dies), where
// a waiter between attempts queues its SET and wins the promoted replica. The
// cell's class then hung on it (issue 25, item 7). With `catch`, the fault
// decides it: just before it acts, each contender's next request that matches
// PATTERN (servers/resp_watch.h) parks at the contender's own links to the
// servers the fault takes away; once every contender has one parked, the fault
// acts, and the parked requests are dropped with their connections: each was
// on its way when the server went, and none reached it. A contender that sent
// no match within the bound was not caught (its links are let go at once, so
// nothing of it is caught later): the fault's bite says so, marked as a
// schedule that missed (Bite::schedule_missed), and the cell is `error`
// (not exercised), never a class the schedule did not decide.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "servers/resp_watch.h"

namespace locklab::harness {

class TcpProxy;
class LockServerLayout;

class CaughtWaiters {
 public:
  explicit CaughtWaiters(RespPattern pattern) : pattern_(std::move(pattern)) {}

  // Arms every client but `holder` on its links to `servers` (one group per client), then polls
  // until each parked one request or `bound` passed; the clients not caught by then are let go.
  // Without per-client links nobody is armed.
  void catch_all_but(LockServerLayout* topology, int holder, const std::vector<std::size_t>& servers,
                     std::chrono::milliseconds bound);
  // Once the fault acted: the caught requests are discarded and their connections reset; the
  // faults call it in the tick that caught them (idempotent: their undo calls it again).
  void drop_caught();
  // For the fault's notes: "caught before the fault acts (SET): client 0's SET ..., client 2's SET ...".
  std::string summary() const;
  // Why the schedule did not decide the cell (a contender not caught, nobody to catch), or nullopt.
  std::optional<std::string> not_caught() const;

 private:
  struct Armed {
    int client = -1;
    std::shared_ptr<ParkGroup> group;
    std::vector<TcpProxy*> links;
    bool caught = false;   // parked within the bound (decided once, as the bound ends)
    bool settled = false;  // its links were dropped or let go
  };
  RespPattern pattern_;
  std::vector<Armed> armed_;
  bool ran_ = false;
  std::string why_not_;  // set when it could not arm (no per-client links)
  std::chrono::milliseconds bound_{0};
};

}  // namespace locklab::harness
