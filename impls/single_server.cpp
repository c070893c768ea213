#include "single_server.h"

namespace locklab {
SingleServerLock::SingleServerLock(const LockConfig& config)
    : key_(config.key),
      step_(config.step),
      retry_interval_(retry_interval_of(config)),
      link_(config.servers.front()) {}

// Through the Link, so a cluster-mode config (ConnectionOptions::cluster) routes
// each command by its key. Connect errors are never outcome-unknown.
Result<redis::Reply> SingleServerLock::call(const redis::Args& args) {
  auto reply = link_.command(args);
  if (reply && reply->is_error())
    return Error{ErrorKind::reply, link_.options().endpoint.to_string() + ": " + args.front() +
                                       " failed: " + std::string(reply->text())};
  return reply;
}

Result<redis::Reply> SingleServerLock::call(redis::Script& script, const redis::Args& keys,
                                                   const redis::Args& args) {
  return link_.run(script, keys, args);  // error replies are already Errors
}

Release SingleServerLock::blind_del(bool& held) {
  clear_error();
  if (!held) return Release::not_owner;
  step_("before-del");
  auto reply = call({"DEL", key_});
  if (!reply) return release_failed(reply.error());
  held = false;
  return reply->integer() == 1 ? Release::released : Release::already_expired;
}

Error config_error(std::string_view generation, const std::string& problem) {
  return {ErrorKind::usage, std::string(generation) + ": " + problem};
}

}  // namespace locklab
