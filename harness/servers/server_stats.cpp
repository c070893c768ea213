#include "servers/server_stats.h"

#include <algorithm>
#include <charconv>

#include "redis/cluster_routing.h"

namespace locklab::harness {

Result<redis::Reply> ask(const redis::ConnectionOptions& server, const redis::Args& args) {
  if (server.cluster) return redis::ClusterConnection(server).command(args);  // to the key's master
  auto connection = redis::Connection::connect(server);
  if (!connection) return connection.error();
  return connection->command(args);
}

Status reachable(const redis::ConnectionOptions& server) {
  auto reply = ask(server, {"PING"});
  if (!reply) return Error{reply.error().kind, "cannot reach Redis at " + server.endpoint.to_string() + ": " +
                                                   reply.error().message};
  if (!reply->is_status("PONG"))
    return Error{ErrorKind::reply, "Redis at " + server.endpoint.to_string() + " answered PING with " + reply->describe()};
  return Done{};
}

namespace {

// A cluster's seed stands for every master: each serves the keys of its slots.
Result<std::vector<redis::ConnectionOptions>> every_master(const std::vector<redis::ConnectionOptions>& servers) {
  std::vector<redis::ConnectionOptions> masters;
  for (const auto& server : servers) {
    if (!server.cluster) {
      masters.push_back(server);
      continue;
    }
    redis::ClusterConnection cluster(server);
    if (auto loaded = cluster.refresh_slot_map(); !loaded) return loaded.error();
    for (const auto& range : cluster.slot_map()) {
      const bool seen = std::any_of(masters.begin(), masters.end(), [&](const redis::ConnectionOptions& known) {
        return known.endpoint.to_string() == range.master.to_string();
      });
      if (seen) continue;
      redis::ConnectionOptions master = server;
      master.endpoint = range.master;
      master.cluster = false;
      masters.push_back(master);
    }
  }
  return masters;
}

}  // namespace

Result<std::int64_t> commands_served(const std::vector<redis::ConnectionOptions>& given) {
  auto servers = every_master(given);
  if (!servers) return servers.error();
  std::int64_t total = 0;
  for (const auto& server : *servers) {
    auto reply = ask(server, {"INFO", "commandstats"});
    if (!reply) return reply.error();
    auto calls = parse_commandstats_calls(reply->text());
    if (!calls) return Error{ErrorKind::protocol, "unreadable INFO commandstats from " + server.endpoint.to_string()};
    total += *calls;
  }
  return total;
}

KeysOnServers keys_left(const std::vector<redis::ConnectionOptions>& servers, const std::string& key) {
  KeysOnServers left;
  for (const auto& server : servers) {
    auto reply = ask(server, {"PTTL", key});
    if (!reply || !reply->is_integer() || reply->integer() == -2) continue;
    ++left.keys;
    if (reply->integer() == -1) ++left.without_ttl;
  }
  return left;
}

std::optional<std::int64_t> parse_commandstats_calls(std::string_view info) {
  std::int64_t total = 0;
  std::size_t start = 0;
  while (start < info.size()) {
    auto end = info.find('\n', start);
    if (end == std::string_view::npos) end = info.size();
    std::string_view line = info.substr(start, end - start);
    start = end + 1;
    if (!line.starts_with("cmdstat_")) continue;
    if (line.starts_with("cmdstat_info:")) continue;  // our own before/after probes
    const auto calls = line.find("calls=");
    if (calls == std::string_view::npos) return std::nullopt;
    std::int64_t n = 0;
    const char* first = line.data() + calls + 6;
    const auto [ptr, ec] = std::from_chars(first, line.data() + line.size(), n);
    if (ec != std::errc{}) return std::nullopt;
    total += n;
  }
  return total;
}

}  // namespace locklab::harness
