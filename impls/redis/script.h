// A Lua script run by EVALSHA, loaded once per server, with a transparent
// fallback when the server answers NOSCRIPT (restarted, SCRIPT FLUSH, failover).
#pragma once

#include <string>

#include "redis/connection.h"

namespace locklab::redis {

// Not thread-safe (caches the SHA): one Script per lock object, like its connection.
class Script {
 public:
  explicit Script(std::string source) : source_(std::move(source)) {}

  // EVALSHA sha numkeys keys... args...; on NOSCRIPT: SCRIPT LOAD, then EVALSHA again.
  // A Redis error reply (a bug in the script, WRONGTYPE) comes back as ErrorKind::reply.
  Result<Reply> run(Connection& connection, const Args& keys, const Args& args);

  // The EVALSHA command for pipelining or fan-out (send()/read_until()). Call
  // load() first on each connection, so NOSCRIPT cannot happen mid-fan-out.
  Args evalsha_command(const Args& keys, const Args& args) const;
  Status load(Connection& connection);

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::string sha_;  // SHA1 of source_, as SCRIPT LOAD reported it
};

// A Redis error reply as an Error value (for callers that got a Reply back).
Error reply_error(const Connection& connection, const Reply& reply, std::string_view what);

}  // namespace locklab::redis
