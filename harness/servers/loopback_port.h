// A free TCP port on 127.0.0.1, for a server we are about to start (a Redis
// node's port, a cluster node's bus port). The port is only probed, not held:
// another process may take it before our server binds it, so a caller retries
// its start on a bind failure (RedisServer::start does).
#pragma once

#include "redis/result.h"

namespace locklab::harness {

// Bind port 0 on loopback, read which port the kernel chose, close.
Result<int> free_loopback_port();

}  // namespace locklab::harness
