// Master discovery through Redis Sentinel: ask the sentinels where the master
// named `name` is (SENTINEL get-master-addr-by-name), the way a Sentinel-aware
// client (Redisson's sentinelServersConfig, redis-py's Sentinel) finds it.
//
// A client asks again after a failover: when its connection to the master
// breaks, or the server it reaches answers READONLY (it is a replica now, e.g.
// an old master that came back and was reconfigured). needs_rediscovery() says
// which failures mean that.
#pragma once

#include <string_view>
#include <vector>

#include "redis/connection.h"
#include "redis/result.h"

namespace locklab::redis {

// The master's address according to the first sentinel that answers with one.
// Sentinels that cannot be reached or do not know `name` are skipped; the
// Error says why the last one failed when none answered.
Result<Endpoint> discover_master(const std::vector<ConnectionOptions>& sentinels, std::string_view name);

// True when this failure means "the master may have moved": the connection
// was lost or refused, or the server says it is a replica (READONLY).
bool needs_rediscovery(const Error& error);

}  // namespace locklab::redis
