// The watchdog of generation 5: ONE thread per process renews every lock held
// with the watchdog on, like Redisson's renewal map (one timer, not a thread
// per lock).
//
// Each renewal runs, every lease/3, on the timer's own connection to the
// lock's server (never the lock's connection: hiredis contexts are not
// thread-safe):
//     if HEXISTS key field == 1 then PEXPIRE key lease; return 1 end; return 0
// 1 = still ours, renewed. 0 = the lock is gone (expired, deleted, taken by
// someone else): renewal stops and the holder's `lost` counter is incremented
// (the holder is not interrupted, exactly like Redisson). An error (server
// unreachable) keeps the schedule and tries again next period.
//
// One thread serves every lock, so one slow server must not starve the
// others: each round trip of a renewal (connect, SCRIPT LOAD, EVALSHA) is cut
// to renewal_round_trip_bound(lease) = lease/12, whatever the lock's own
// command timeout (>= 2 s by default). A whole renewal thus takes at most
// lease/4, under the lease/3 period: the other locks' renewals are delayed by
// at most that much, and their leases never lapse on account of it
// (tests/reentrant_watchdog_test.cpp, OneHungServerDoesNotLetAnotherServersLeaseLapse). Renewals die
// with the process: that is what frees a crashed holder's lock.
//
// Created lazily in the process that first uses it (ProcessLocal): a fork()ed
// child gets its own thread and connections.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "redis/connection.h"

#include "step_points.h"

namespace locklab {

// The renewal, run by EVALSHA: KEYS[1] lock, ARGV[1] owner field, ARGV[2] lease ms; 1 renewed, 0 not ours.
extern const char* const kRenewScript;

// The timeout of each round trip of a renewal of a `lease`-long lock (>= 1 ms).
std::chrono::milliseconds renewal_round_trip_bound(std::chrono::milliseconds lease);

struct Renewal {
  redis::ConnectionOptions server;
  std::string key;
  std::string field;  // the holder's "owner:thread" hash field
  std::chrono::milliseconds lease{30'000};
  StepPoints step;    // "before-renewal" runs on the timer thread
  std::shared_ptr<std::atomic<std::uint64_t>> lost;  // incremented when renewal returns 0
};

class RenewalTimer {
 public:
  static RenewalTimer& for_this_process();

  // Start renewing. First renewal one period from now; when this
  // server/key/field is already scheduled (a reentrant acquire, or a fresh one
  // racing the renewal that finds the old hold gone) it is kept scheduled.
  void start(Renewal renewal);
  // Stop renewing (final release, force_unlock, the lock object's death).
  // False when it was not scheduled (never started, or a renewal already found it lost).
  bool stop(const redis::ConnectionOptions& server, const std::string& key, const std::string& field);

  std::size_t scheduled() const;

  RenewalTimer();  // use for_this_process()

 private:
  struct Entry {
    Renewal renewal;
    std::uint64_t id = 0;        // tells this entry from one stopped and started again meanwhile
    std::uint64_t restarts = 0;  // start() calls on the live entry (re-acquisitions)
    std::chrono::steady_clock::time_point due;
  };
  enum class Outcome { renewed, lost, failed, abandoned };

  static std::string name_of(const redis::ConnectionOptions& server, const std::string& key, const std::string& field);
  void run();
  Outcome renew(const Renewal& renewal);  // on the timer thread, without mutex_

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Entry> entries_;
  std::uint64_t next_id_ = 1;
  struct Links;
  std::unique_ptr<Links> links_;  // the timer thread's own connections, one per server
};

}  // namespace locklab
