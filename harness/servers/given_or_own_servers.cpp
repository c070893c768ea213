#include "servers/given_or_own_servers.h"

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

redis::ConnectionOptions plain_options(const redis::Endpoint& endpoint) {
  redis::ConnectionOptions options;
  options.endpoint = endpoint;
  return options;
}

Result<GivenOrOwnServers> provide_given_or_own_servers(const std::vector<redis::Endpoint>& given,
                                                       std::size_t own_count, const OptionsFor& options_for) {
  GivenOrOwnServers servers;
  if (!given.empty()) {
    for (const auto& endpoint : given) servers.lock.push_back(options_for(endpoint));
    return servers;
  }
  auto started = start_masters(own_count);
  if (!started) return started.error();
  servers.owned = std::move(started).value();
  for (const auto& server : servers.owned) servers.lock.push_back(server->connection_options());
  return servers;
}

}  // namespace locklab::harness
