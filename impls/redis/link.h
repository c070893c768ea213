// A connection that replaces itself after an error (hiredis contexts are dead
// after any error), so a lock survives a server restart or a timeout.
#pragma once

#include <optional>

#include "redis/connection.h"

namespace locklab::redis {

class Link {
 public:
  explicit Link(ConnectionOptions options) : options_(std::move(options)) {}

  // The live connection, reconnecting first if there is none or it broke.
  Result<Connection*> get() {
    if (connection_ && !connection_->broken()) return &*connection_;
    connection_.reset();
    auto fresh = Connection::connect(options_);
    if (!fresh) return fresh.error();
    connection_.emplace(std::move(fresh).value());
    return &*connection_;
  }

  // One command on the live connection (reconnecting if needed).
  Result<Reply> command(const Args& args) {
    auto connection = get();
    if (!connection) return connection.error();
    return (*connection)->command(args);
  }

  const ConnectionOptions& options() const { return options_; }

 private:
  ConnectionOptions options_;
  std::optional<Connection> connection_;
};

}  // namespace locklab::redis
