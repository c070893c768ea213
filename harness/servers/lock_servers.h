// The lock servers a run or a scenario is pointed at (--redis HOST:PORT,...).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "redis/connection.h"

namespace locklab::harness {

// Parses "host:port[,host:port...]"; nullopt + *why when malformed.
std::optional<std::vector<redis::Endpoint>> parse_endpoints(const std::string& text, std::string* why);

}  // namespace locklab::harness
