// One request of seed 004 §11's counter demo: the article's `testNoLock` handler,
//
//   GET counter          (missing: return without writing, as the article does)
//   ... gap ...          (the article's handler has its own latency; ours is explicit)
//   SET counter n+1
//
// run through a lock of any registry generation ("no-lock" and "local-mutex"
// included). The lock object is made per request: each request is one client
// identity, like one Java request thread.
#pragma once

#include <chrono>
#include <string>

#include "redis/connection.h"

#include "lock.h"

namespace locklab::scenarios {

struct CounterSetup {
  redis::ConnectionOptions counter_server;
  std::string counter_key = "counter-demo:count";
  std::string lock_name = "no-lock";
  LockConfig lock;  // key, ttl, retry, servers
  std::chrono::milliseconds gap{5};      // between GET and SET: makes overlapping requests lose updates
  std::chrono::milliseconds wait{30'000};  // how long a request waits for the lock
};

enum class RequestOutcome {
  incremented,      // GET n, SET n+1 done under the lock
  counter_missing,  // the key was not there: nothing written (the article's early return)
  lock_not_taken,   // the lock wait ran out or failed: nothing written (an HTTP 503)
  redis_failed,     // GET or SET failed
};

const char* to_string(RequestOutcome outcome);

// The article's GET /test.
RequestOutcome increment_counter(const CounterSetup& setup);

// GET /getCount: the counter's text ("1", "101"), or "null" when missing, or an Error.
Result<std::string> read_counter(const CounterSetup& setup);

// "将count重置为1": SET counter 1.
Status reset_counter(const CounterSetup& setup);

}  // namespace locklab::scenarios
