// The lock servers a run or a scenario is pointed at (--redis HOST:PORT,...),
// or, without --redis, the ones it starts for itself.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "redis/connection.h"
#include "redis/result.h"

#include "servers/redis_server.h"

namespace locklab::harness {

// Parses "host:port[,host:port...]"; nullopt + *why when malformed.
std::optional<std::vector<redis::Endpoint>> parse_endpoints(const std::string& text, std::string* why);

struct GivenOrOwnServers {
  ServerList owned;                           // ours; stopped when this goes away (empty for given ones)
  std::vector<redis::ConnectionOptions> lock;  // how to reach each, in order
};

// How to reach a given endpoint (timeouts and the like).
using OptionsFor = std::function<redis::ConnectionOptions(const redis::Endpoint&)>;
// Just the endpoint, with ConnectionOptions' defaults.
redis::ConnectionOptions plain_options(const redis::Endpoint& endpoint);

// The `given` endpoints, each reached as `options_for` says; none given:
// `own_count` fresh masters of our own, reached as they say (connection_options()).
Result<GivenOrOwnServers> provide_given_or_own_servers(const std::vector<redis::Endpoint>& given,
                                                       std::size_t own_count, const OptionsFor& options_for = plain_options);

}  // namespace locklab::harness
