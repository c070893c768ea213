// Generation 5: `reentrant-watchdog`, Redisson's RLock (seeds 000, 001, 004 §8–9).
//
// The lock is a hash {owner field: hold count}; the owner field is
// "<client id>:<thread id>" (Redisson's UUID:threadId), so the same thread may
// re-enter and must release as many times, and another thread of the same
// client is another owner. Scripts (in the .cpp, at the top):
//   acquire  free or ours → HINCRBY field 1, PEXPIRE ttl, nil; else → PTTL
//   release  decrement; > 0 → PEXPIRE, still held; 0 → DEL + PUBLISH channel;
//            no key → PUBLISH, already_expired (Redisson answers 1 here)
//   renew    (watchdog, renewal_timer.h) HEXISTS field → PEXPIRE
//   force    DEL + PUBLISH, no owner check
// With LockConfig::watchdog (the default, Redisson's lock() with no lease)
// ttl is the watchdog timeout and the process's renewal timer re-PEXPIREs the
// key every ttl/3 while we hold it. watchdog = false is Redisson's
// tryLock(wait, leaseTime): the key expires after ttl whatever the holder does.
// A waiter sleeps on pub/sub (unlock_subscriber.h) until an unlock message or
// the PTTL the script returned, then retries. Two ways to wake waiters:
//
//   queued (the default; a departure from Redisson). A waiter subscribes to its
//   own channel "locklab_lock__channel:{key}:w:<owner field>" (kept between
//   acquisitions) and its retries queue it in the ZSET
//   "locklab_lock__waiters:{key}" (oldest first). A release PUBLISHes to the
//   oldest waiter only; PUBLISH answering 0 (that waiter is gone) drops it and
//   tries the next. One release wakes one waiter: no thundering herd
//   (ReleaseWakesOneWaiterNotTheHerd). The woken waiter is not handed the lock:
//   a newcomer (or the releaser itself) may still take it first, as in
//   Redisson's non-fair RLock; the loser keeps its place and is woken again.
//   A wait that ends without the lock leaves the queue (one more round trip)
//   and passes the wake-up on if the lock is free.
//   Round trips under contention: the attempt that queues us, the one after the
//   wake-up; uncontended: 1 (the acquire script), + 1 for the release.
//
//   broadcast (LockConfig::redisson_compatible: Redisson's wire protocol).
//   Every waiter subscribes to "redisson_lock__channel:{key}" for the length of
//   its wait; a release publishes "0" there and every waiter wakes and retries,
//   the losers get a PTTL and sleep again. The owner field is "<UUID>:<thread
//   id>". A locklab client and a Redisson client then share the lock and wake
//   each other (tests/redisson_compat_test.cpp, docs/peers.md).
//
// Optional WAIT guard (LockConfig::wait_replicas > 0, Redisson's syncedEval):
// after the acquire script, WAIT for that many replicas; fewer acks => undo the
// hold and report error (replica_wait.h). It narrows the failover window below.
//
// Its race: nothing protects against losing the key itself. The master
// acknowledges the acquire before replicating it; if it dies and a replica
// without the key is promoted, a second client acquires (seed 001 §二.5, fault
// matrix row 7; FailoverToAReplicaWithoutTheKeyGivesASecondHolder). A paused
// holder (GC, SIGSTOP) also pauses its watchdog, so it still loses the lock
// after ttl (row 2). The watchdog fixes generation 4's
// slow-but-alive holder (row 3): tests/reentrant_watchdog_test.cpp,
// WatchdogKeepsASlowHolderAndNobodyElseGetsIn versus ExplicitLeaseExpiresWhileTheHolderWorks.
//
// Step points: "after-acquire-script" (acquired, watchdog not yet started),
// "after-failed-attempt" (every attempt that got a PTTL), "before-undo" (the
// WAIT guard is about to undo a hold the replicas lack), "before-wait" (about to
// sleep on the channel), "before-unlock-script", "before-force-unlock-script" (renewals
// already cancelled), and on the timer thread
// "before-renewal" / "after-renewal-script" (a hook that throws there stops that renewal).
//
// Thread-safe: one lock object may be used by several threads, each its own owner.
// Destroying the object stops its renewals (the client "died") but never releases.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "redis/link.h"
#include "redis/script.h"

#include "lock.h"
#include "script_shape.h"
#include "unlock_subscriber.h"

namespace locklab {

// Its scripts as the traffic shows them (script_shape.h): acquire (2 keys, 4 args); release,
// force unlock and leave the queue (3 keys, 4 args each); the watchdog's renew (1 key, 2 args).
const std::vector<ScriptShape>& reentrant_watchdog_scripts();

class ReentrantWatchdogLock final : public DistributedLock {
 public:
  static LockResult create(const LockConfig& config);
  ~ReentrantWatchdogLock() override;

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  Release release() override;
  std::uint64_t leases_lost() const override { return lost_->load(); }

  // Redisson's forceUnlock(): delete the key whoever holds it and wake the
  // waiters. released = there was a key; already_expired = there was none.
  Release force_unlock();

  // The hash field this thread owns ("<owner>:<thread id>").
  std::string owner_field() const;
  // Broadcast mode: the channel every waiter listens on. Queued: the prefix of
  // every waiter's own channel.
  const std::string& channel() const { return channel_; }
  // The channel the waiting thread owning `field` listens on.
  std::string waiter_channel(const std::string& field) const;
  const std::string& waiters_key() const { return waiters_key_; }

  explicit ReentrantWatchdogLock(const LockConfig& config);  // use make()

 private:
  struct Attempt {
    bool acquired = false;
    std::optional<long long> pttl;    // when held by someone else (-1: no expiry)
    std::optional<Acquire> failure;  // error / unknown

    static Attempt won() { return {true, std::nullopt, std::nullopt}; }
    static Attempt held(long long pttl) { return {false, pttl, std::nullopt}; }
    static Attempt failed(Acquire why) { return {false, std::nullopt, why}; }
  };
  bool queued() const { return !config_.redisson_compatible; }
  Attempt attempt(const std::string& field, bool queue_up);
  Acquire wait_and_retry(const std::string& field, std::chrono::steady_clock::time_point deadline,
                         std::optional<long long> queued_pttl);
  Result<Subscription*> subscription_for_wait(const std::string& field, std::chrono::steady_clock::time_point deadline,
                                              std::unique_ptr<Subscription>& per_wait);
  bool has_doorbell(const std::string& field);
  Acquire stop_waiting(const std::string& field, Acquire outcome);
  void forget_inherited_doorbells();  // with mutex_ held
  Acquire acquired(const std::string& field);
  struct Shortfall {
    std::string why;
    bool undone;  // the hold was taken back; false = it may remain (Acquire::unknown)
  };
  std::optional<Shortfall> replication_shortfall(const std::string& field);  // the WAIT guard
  int holds(const std::string& field);  // our re-entry depth as this object counts it
  void set_holds(const std::string& field, int count);
  Result<redis::Reply> run(redis::Script& script, const redis::Args& keys, const redis::Args& args);
  Result<redis::Reply> command(const redis::Args& args);
  redis::Link& link_for_this_process();  // with mutex_ held
  void start_renewal(const std::string& field);  // no-op without the watchdog
  bool stop_renewal(const std::string& field);
  void stop_all_renewals();  // with mutex_ held  // true = the timer was still renewing it

  LockConfig config_;
  StepPoints step_;
  std::string client_id_;
  std::string channel_;
  std::string waiters_key_;
  const char* broadcast_;  // "1" = Redisson's one channel for all, "0" = wake one waiter
  std::shared_ptr<std::atomic<std::uint64_t>> lost_ = std::make_shared<std::atomic<std::uint64_t>>(0);

  std::mutex mutex_;  // guards everything below: one round trip at a time
  pid_t creator_;
  std::unique_ptr<redis::Link> link_;
  redis::Script acquire_script_;
  redis::Script release_script_;
  redis::Script force_script_;
  redis::Script leave_script_;
  std::map<std::string, std::unique_ptr<Subscription>> doorbells_;  // queued mode: field -> its own channel
  std::set<std::string> renewing_;  // fields this object asked the timer to renew
  std::map<std::string, int> holds_;  // field -> holds we know we have (0 = absent)
};

}  // namespace locklab
