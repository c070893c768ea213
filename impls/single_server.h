// What the single-server Redis generations (1–4, 7 fenced, 8 fair queue) share, so each of their files
// holds only its algorithm: one connection to config.servers[0], step points,
// the retry interval, and how a Redis failure becomes an outcome.
//
// Connections are lazy: creating a lock only validates its config; the first
// try_acquire() connects. An unreachable server or a refused AUTH therefore
// surfaces as Acquire::error / Release::error with last_error() naming the
// server, within ConnectionOptions::connect_timeout (+ command_timeout for
// AUTH). A connection that broke is replaced on the next call (redis::Link),
// so a lock survives a server restart.
//
// With config.servers[0].cluster set, servers[0] is any node of a Redis
// Cluster and every command and script is routed by its first key to the
// master owning that key's slot (redis::Link, redis/cluster_routing.h).
#pragma once

#include <chrono>
#include <string>

#include "redis/link.h"
#include "redis/script.h"

#include "lock.h"
#include "polling.h"

namespace locklab {

class SingleServerLock : public DistributedLock {
 protected:
  explicit SingleServerLock(const LockConfig& config);

  // One command. A Redis error reply (-NOAUTH, -WRONGTYPE, ...) comes back as an
  // ErrorKind::reply Error. A failure to (re)connect is reported with a kind for
  // which outcome_unknown() is false: nothing was sent, nothing was applied.
  Result<redis::Reply> call(const redis::Args& args);
  Result<redis::Reply> call(redis::Script& script, const redis::Args& keys, const redis::Args& args);

  // A command that could have taken the lock failed: if its reply was lost it
  // may have been applied, so the outcome is `unknown`, never "not held".
  Acquire acquiring_command_failed(const Error& error) {
    return fail(error.outcome_unknown() ? Acquire::unknown : Acquire::error, error.message);
  }
  // A command that cannot take the lock (GET) failed.
  Acquire probing_command_failed(const Error& error) { return fail(Acquire::error, error.message); }
  Release release_failed(const Error& error) { return fail(Release::error, error.message); }

  // The release of generations 1, 1b and 2: `DEL key` without asking whose key
  // it is (their shared race: a late DEL frees the next holder's lock). Step
  // point "before-del". not_owner without a command when we never acquired.
  Release blind_del(bool& held);

  // poll_until_acquired() with this lock's retry interval.
  template <class Attempt>
  Acquire poll(std::chrono::milliseconds wait, Attempt&& attempt) {
    clear_error();
    return poll_until_acquired(wait, retry_interval_, std::forward<Attempt>(attempt));
  }

  const std::string key_;
  const StepPoints step_;
  const std::chrono::milliseconds retry_interval_;

 private:
  redis::Link link_;
};

// "<generation>: <problem>" as a usage Error, for the factories.
Error config_error(std::string_view generation, const std::string& problem);

}  // namespace locklab
