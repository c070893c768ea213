#include "server_stats.h"

#include <charconv>

namespace locklab::harness {

Result<redis::Reply> ask(const redis::ConnectionOptions& server, const redis::Args& args) {
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

Result<std::int64_t> commands_served(const std::vector<redis::ConnectionOptions>& servers) {
  std::int64_t total = 0;
  for (const auto& server : servers) {
    auto reply = ask(server, {"INFO", "commandstats"});
    if (!reply) return reply.error();
    auto calls = parse_commandstats_calls(reply->text());
    if (!calls) return Error{ErrorKind::protocol, "unreadable INFO commandstats from " + server.endpoint.to_string()};
    total += *calls;
  }
  return total;
}

KeysLeft keys_left(const std::vector<redis::ConnectionOptions>& servers, const std::string& key) {
  KeysLeft left;
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
