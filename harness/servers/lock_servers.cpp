#include "servers/lock_servers.h"

#include <sstream>

namespace locklab::harness {

std::optional<std::vector<redis::Endpoint>> parse_endpoints(const std::string& text, std::string* why) {
  std::vector<redis::Endpoint> endpoints;
  std::stringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    auto endpoint = redis::Endpoint::parse(part);
    if (!endpoint || endpoint->port <= 0 || endpoint->port > 65535) {
      if (why) *why = "bad Redis address '" + part + "' (expected HOST:PORT)";
      return std::nullopt;
    }
    endpoints.push_back(*endpoint);
  }
  if (endpoints.empty()) {
    if (why) *why = "--redis needs at least one HOST:PORT";
    return std::nullopt;
  }
  return endpoints;
}

}  // namespace locklab::harness
