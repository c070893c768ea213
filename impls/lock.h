// The one interface every lock generation implements.
//
// A lock object belongs to one client identity (Redisson's "UUID:threadId"):
// create one per client, use it from one thread at a time. Destroying a lock
// object does NOT release the lock: a crashed client does not release either,
// and the harness relies on that to model crashes.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "redis/connection.h"
#include "redis/result.h"

#include "clock.h"
#include "step_points.h"

namespace locklab {

enum class Acquire {
  acquired,   // we hold the lock
  timed_out,  // the wait ran out; we do not hold it
  unknown,    // an acquiring request was sent but its reply was lost: we may hold it
  error,      // failed before anything that could take the lock reached the server
};

enum class Release {
  released,         // our hold ended and the key was removed (or, reentrant: the last level)
  still_held,       // reentrant: one level released, the lock is still ours
  not_owner,        // the key is held by someone else; nothing was changed
  already_expired,  // there was nothing to release (our lease ran out)
  error,            // the server could not be asked; the outcome is unknown
};

const char* to_string(Acquire outcome);
const char* to_string(Release outcome);

struct LockConfig {
  std::string key = "locklab:lock";
  // Lease length for the TTL-based generations (3+). Generation 2 writes
  // now + ttl + 1 into the key. Generation 5 with its watchdog on treats this
  // as the watchdog timeout (renewed every ttl/3).
  std::chrono::milliseconds ttl{10'000};
  // Pause between attempts for the polling generations; nullopt = the
  // generation's default (see docs/generations.md; the seeds' own values are
  // 1 s for seed 004's SETNX loop and 100 ms for seed 003).
  std::optional<std::chrono::milliseconds> retry_interval;
  // One server for every generation but redlock (N independent masters).
  std::vector<redis::ConnectionOptions> servers;
  // The client identity. Generations 1, 1b and 5 store it as is (empty = a
  // random 128-bit id per lock object). The token generations (3, 4, 6, 7)
  // draw a fresh token per acquisition and use `owner` only as its prefix:
  // "<owner>:<32 hex>" (empty = the random part alone; token.h).
  std::string owner;
  std::shared_ptr<const WallClock> clock = system_wall_clock();
  StepHook step;

  // Generation 5 only: false = ttl is a fixed lease and no watchdog runs
  // (Redisson's tryLock(wait, leaseTime, unit)).
  bool watchdog = true;
  // Generation 5 only: true = Redisson's wire protocol (channel
  // "redisson_lock__channel:{key}", unlock message "0" waking every waiter,
  // owner field "<UUID>:<thread id>"), so a locklab client shares the lock with
  // Redisson clients. false = waiters queue and a release wakes one of them.
  bool redisson_compatible = false;

  // Generations 4 and 5: after acquiring, WAIT for this many replicas
  // (Redisson's guard against failover); fewer acks => release, report error.
  int wait_replicas = 0;
  std::chrono::milliseconds wait_replicas_timeout{100};

  // Redlock only.
  std::chrono::milliseconds node_timeout{0};  // 0 = scaled from ttl
  double clock_drift_factor = 0.01;
  int max_extensions = 3;
};

// Per-node outcome counters of a multi-node lock (Redlock).
struct NodeTally {
  std::uint64_t voted_for = 0;
  std::uint64_t voted_against = 0;
  std::uint64_t errored = 0;
  std::uint64_t timed_out = 0;
};

// Calls the lock's library had not returned from past the harness's bound (an adapter's reply
// with blocked_ms, docs/adapters.md): a service calling it would have hung (liveness).
struct Blocked {
  std::uint64_t calls = 0;
  std::uint64_t acquires = 0;  // of them, acquires answered `unknown` (run.cpp: not a failure to measure)
  std::int64_t longest_ms = 0;
  std::string what;  // the adapter's line for the longest: "acquire blocked 1000 ms past its wait bound ..."
};

class DistributedLock {
 public:
  virtual ~DistributedLock() = default;

  // wait 0 = exactly one attempt.
  virtual Acquire try_acquire(std::chrono::milliseconds wait) = 0;
  virtual Release release() = 0;

  // Why the calling thread's last call returned error/unknown (empty otherwise).
  // Per thread, because a reentrant lock object may serve several threads.
  std::string last_error() const;

  // Generations that hand out fencing tokens return the current holder's token.
  virtual std::optional<std::uint64_t> fencing_token() const { return std::nullopt; }
  // Until when the holder may assume it still holds the lock (Redlock's validity).
  virtual std::optional<std::chrono::steady_clock::time_point> valid_until() const { return std::nullopt; }
  // How many times a renewal found the lock gone while we believed we held it.
  virtual std::uint64_t leases_lost() const { return 0; }
  virtual std::optional<NodeTally> node_tally() const { return std::nullopt; }
  // A lock whose client is beyond repair (a lock served by another process
  // that misbehaved: an adapter, docs/adapters.md) says why in one line, and
  // every later call fails at once; empty while it works. None of ours breaks.
  virtual std::string broken() const { return {}; }
  // A lock whose own process died mid-run (an adapter that exited): why, in one line; the
  // client is then a crashed client (workload/client_pools.cpp), not a failed one. None of ours dies.
  virtual std::string died() const { return {}; }
  // Asked inside a section, without blocking: has the lock's own process died since its last
  // call (died() then says why)? A client must not write for a service that is gone.
  virtual bool died_now() { return false; }
  // Waits `span` (a section's hold), ending early if the lock's process dies: died_now().
  virtual bool died_within(std::chrono::milliseconds span) {
    std::this_thread::sleep_for(span);
    return false;
  }
  virtual Blocked blocked() const { return {}; }
  // Ends what the lock runs outside the calling process (an adapter: its
  // stdin closed, then reaped), so nothing of it outlives its client; the lock
  // answers nothing after. Ours run nothing outside: nothing to do.
  virtual void close() {}

 protected:
  Acquire fail(Acquire outcome, std::string why) {
    record_error(std::move(why));
    return outcome;
  }
  Release fail(Release outcome, std::string why) {
    record_error(std::move(why));
    return outcome;
  }
  void clear_error() { record_error({}); }

 private:
  void record_error(std::string why);

  mutable std::mutex errors_mutex_;
  std::map<std::thread::id, std::string> errors_;  // only threads whose last call failed
};

// What every generation's create() returns: the lock, or why it could not be made.
using LockResult = Result<std::unique_ptr<DistributedLock>>;

// Checks what every Redis generation needs: a non-empty key, ttl > 0, at
// least `min_servers` servers. Returns the problem as one line, or nullopt.
std::optional<std::string> invalid_config(const LockConfig& config, std::size_t min_servers = 1);

}  // namespace locklab
