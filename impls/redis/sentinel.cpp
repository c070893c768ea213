#include "redis/sentinel.h"

#include <charconv>
#include <string>

namespace locklab::redis {
namespace {

// One sentinel's answer: a 2-element array [host, port], nil when it does not monitor `name`.
Result<Endpoint> ask_one(const ConnectionOptions& sentinel, std::string_view name) {
  auto connection = Connection::connect(sentinel);
  if (!connection) return connection.error();
  auto reply = connection->command({"SENTINEL", "get-master-addr-by-name", std::string(name)});
  if (!reply) return reply.error();
  const std::string from = "sentinel " + sentinel.endpoint.to_string() + ": ";
  if (reply->is_error()) return Error{ErrorKind::reply, from + std::string(reply->text())};
  if (reply->is_nil()) return Error{ErrorKind::reply, from + "no master named '" + std::string(name) + "'"};
  if (!reply->is_array() || reply->size() != 2)
    return Error{ErrorKind::protocol, from + "unexpected reply " + reply->describe()};
  const auto host = reply->element(0).string();
  const auto port_text = reply->element(1).string();
  if (!host || !port_text) return Error{ErrorKind::protocol, from + "unexpected reply " + reply->describe()};
  Endpoint endpoint;
  endpoint.host = *host;
  const auto [end, problem] = std::from_chars(port_text->data(), port_text->data() + port_text->size(), endpoint.port);
  if (problem != std::errc{} || end != port_text->data() + port_text->size())
    return Error{ErrorKind::protocol, from + "bad port '" + *port_text + "'"};
  return endpoint;
}

}  // namespace

Result<Endpoint> discover_master(const std::vector<ConnectionOptions>& sentinels, std::string_view name) {
  Error last{ErrorKind::usage, "no sentinel given"};
  for (const auto& sentinel : sentinels) {
    auto master = ask_one(sentinel, name);
    if (master) return master;
    last = master.error();
  }
  return last;
}

bool needs_rediscovery(const Error& error) {
  switch (error.kind) {
    case ErrorKind::io:
    case ErrorKind::closed:
    case ErrorKind::timeout:
      return true;
    case ErrorKind::reply:
      return error.message.find("READONLY") != std::string::npos;
    default:
      return false;
  }
}

}  // namespace locklab::redis
