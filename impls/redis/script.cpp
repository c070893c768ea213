#include "redis/script.h"

namespace locklab::redis {

Error reply_error(const Connection& connection, const Reply& reply, std::string_view what) {
  return {ErrorKind::reply, connection.options().endpoint.to_string() + ": " + std::string(what) +
                                " failed: " + std::string(reply.text())};
}

Status Script::load(Connection& connection) {
  auto reply = connection.command({"SCRIPT", "LOAD", source_});
  if (!reply) return reply.error();
  if (!reply->is_string()) return reply_error(connection, *reply, "SCRIPT LOAD");
  sha_ = std::string(reply->text());
  return Done{};
}

Args Script::evalsha_command(const Args& keys, const Args& args) const {
  Args command{"EVALSHA", sha_, std::to_string(keys.size())};
  command.insert(command.end(), keys.begin(), keys.end());
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

namespace {
// SCRIPT LOAD changes nothing the caller can see: when it fails, the script
// itself was never sent, whatever happened to the LOAD request.
Error script_never_ran(Error error) {
  error.request_sent = false;
  return error;
}
}  // namespace

Result<Reply> Script::run(Connection& connection, const Args& keys, const Args& args) {
  if (sha_.empty()) {
    if (auto loaded = load(connection); !loaded) return script_never_ran(loaded.error());
  }
  auto reply = connection.command(evalsha_command(keys, args));
  if (!reply) return reply;
  if (reply->is_error() && reply->text().starts_with("NOSCRIPT")) {
    if (auto loaded = load(connection); !loaded) return script_never_ran(loaded.error());
    reply = connection.command(evalsha_command(keys, args));
    if (!reply) return reply;
  }
  if (reply->is_error()) return reply_error(connection, *reply, "script");
  return reply;
}

}  // namespace locklab::redis
