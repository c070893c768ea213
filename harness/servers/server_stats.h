// What the coordinator asks the servers outside the workload: are they up, how
// many commands did they serve (INFO commandstats), which lock keys are left.
// Every question goes over a fresh short-timeout connection of its own, so a
// probe never shares state with a client under test.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/connection.h"

namespace locklab::harness {

// One command on a fresh connection (a cluster's seed: routed to the key's master).
Result<redis::Reply> ask(const redis::ConnectionOptions& server, const redis::Args& args);

// PING answered PONG; the error names the server.
Status reachable(const redis::ConnectionOptions& server);

// Commands the servers have served so far, summed (INFO itself excluded); a
// cluster's seed counts every master of the cluster.
Result<std::int64_t> commands_served(const std::vector<redis::ConnectionOptions>& servers);

// Servers on which `key` still exists, and how many of those have no TTL (the
// checker's KeysLeft, kept apart so the servers know nothing of the checker).
struct KeysOnServers {
  int keys = 0;
  int without_ttl = 0;
};
KeysOnServers keys_left(const std::vector<redis::ConnectionOptions>& servers, const std::string& key);

// Sum of `calls` over INFO commandstats, minus INFO itself (our own probe).
std::optional<std::int64_t> parse_commandstats_calls(std::string_view info);

}  // namespace locklab::harness
