// Generation 8: `fair-queue`, a FIFO lock with direct handoff (the idea of
// Redisson's RFairLock; beyond the seeds). Scripts at the top of the .cpp.
//
// Keys, all in the lock key's cluster slot (hash tag):
//   <key>               the lock: "<owner token>:<attempt number>" PX ttl
//   {<key>}:queue       LIST of waiting ids, oldest first
//   {<key>}:timeouts    ZSET waiting id -> deadline (server ms); a live waiter
//                       re-runs the acquire script every ttl/3 (its heartbeat),
//                       which pushes its deadline to now + ttl
//   {<key>}:w:<owner>   pub/sub channel of one lock object (one waiter)
//
//   acquire  EVALSHA acquire 3 <key> <queue> <timeouts> <id> <ttl> <prefix> <queue up?>
//            ours already (handed over) -> acquired; prune waiters past their deadline;
//            free and nobody ahead -> SET id PX ttl, acquired; free but someone ahead ->
//            hand it to the head; busy -> ZADD deadline (+ RPUSH if new), reply PTTL
//   release  EVALSHA release: ours -> DEL, prune, hand over to the head
//            (SET head PX ttl, LPOP, PUBLISH on the head's channel only)
//   leave    EVALSHA leave (the wait ran out): handed to us meanwhile -> we hold it;
//            else LREM/ZREM ourselves, prune, hand over if the lock is free
//
// The release hands the lock over inside Redis and wakes exactly the next
// waiter, whose acquisition is then already done: no thundering herd, and no
// retry round trip. Round trips per acquisition: 1 uncontended (acquire
// script) and 1 under contention (the acquire script that queues us; the
// wake-up is a pushed message, not a request), + 1 for the release; plus, once
// per lock object, SUBSCRIBE on its own waiting connection, and one heartbeat
// per ttl/3 of waiting. With the counter's GET and SET: 4 per acquisition, the floor.
// Deadlines and pruning use the server's clock (TIME), never the clients'.
//
// Its races. (1) The lease: no watchdog, so a holder slower than its ttl
// overlaps the next waiter, who is handed the lock when it lapses
// (tests/fair_queue_test.cpp FairQueueTest.SlowHolderOverlapsTheNextWaiter; as generation 4).
// (2) A crashed waiter: a waiter that dies in the queue stops heart-beating and
// is pruned once its deadline passes (FairQueueTest.CrashedWaiterPastItsDeadlineIsSkipped);
// but if a release hands the lock to it before then, the queue waits for that
// handed-over lease to run out, at most one ttl
// (FairQueueTest.CrashedWaiterAtTheHeadBlocksTheQueueForAtMostOneLease).
// (3) A wait that runs out while the lock is being handed to us: leave finds
// the lock ours and try_acquire reports acquired, not a lost lock
// (FairQueueTest.HandoverDuringLeaveIsAnAcquisition).
// (4) A queued waiter cut off from Redis (its heartbeat, or its doorbell, and
// then its leave fail) stays queued and may be handed the lock by the next
// release: try_acquire answers unknown, never error
// (FairQueueTest.WaiterCutOffWhileQueuedIsUnknownNotError).
//
// Every client of one key must use the same ttl: a release hands the next
// waiter a lease of the releaser's ttl, and a waiter's deadline is its own ttl.
//
// Step points: "after-queued" (the acquire script queued us), "before-wait",
// "after-wait" (a wait ended: message, heartbeat or deadline), "before-leave",
// "before-release".
//
// One thread at a time per lock object (like generations 1-4). Destroying it
// never releases and never leaves the queue: a crashed client does neither.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "redis/connection.h"
#include "redis/script.h"

#include "script_shape.h"
#include "single_server.h"

namespace locklab {

// Its scripts as the traffic shows them (script_shape.h): acquire (3 keys, 5 args), release
// and leave (3 keys, 3 args each), each with the shared prelude.
const std::vector<ScriptShape>& fair_queue_scripts();

class FairQueueLock final : public SingleServerLock {
 public:
  static LockResult create(const LockConfig& config);

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  Release release() override;

  // The value our hold writes into the lock key ("<owner>:<attempt>"); empty when none.
  const std::string& hold_id() const { return hold_id_; }
  const std::string& queue_key() const { return queue_key_; }
  const std::string& timeouts_key() const { return timeouts_key_; }
  const std::string& channel() const { return channel_; }

 private:
  explicit FairQueueLock(const LockConfig& config);

  Result<redis::Reply> run_acquire(const std::string& id, bool queue_up);
  Acquire leave(const std::string& id);
  Acquire abandon(const std::string& id, const Error& why);  // leave after a failed round: acquired, unknown or why's outcome
  Acquire acquired(const std::string& id);
  Status subscribe();
  // True = `id` was handed the lock; false = `until` passed first (or a stale message).
  Result<bool> wait_for_handover(const std::string& id, std::chrono::steady_clock::time_point until);

  const LockConfig config_;
  const std::string owner_;
  const std::string queue_key_;
  const std::string timeouts_key_;
  const std::string channel_prefix_;
  const std::string channel_;
  const std::string ttl_ms_;
  redis::Script acquire_script_;
  redis::Script release_script_;
  redis::Script leave_script_;

  std::uint64_t attempts_ = 0;  // numbers the ids, so a late message from an earlier attempt is ignored
  std::string hold_id_;
  std::optional<redis::Connection> doorbell_;  // subscribed to channel_, kept between acquisitions
  pid_t doorbell_creator_ = 0;
};

}  // namespace locklab
