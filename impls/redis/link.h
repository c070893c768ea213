// A connection that replaces itself after an error (hiredis contexts are dead
// after any error), so a lock survives a server restart or a timeout.
//
// With ConnectionOptions::cluster the endpoint is a seed of a Redis Cluster:
// command() and run() are routed by their first key to the master owning its
// slot, following MOVED/ASK (redis::ClusterConnection). A lock keeps all of its
// keys in one slot (hash tags), so routing by the first key is routing the lock.
#pragma once

#include <memory>
#include <optional>

#include "redis/cluster_routing.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace locklab::redis {

class Link {
 public:
  explicit Link(ConnectionOptions options) : options_(std::move(options)) {
    if (options_.cluster) cluster_ = std::make_unique<ClusterConnection>(options_);
  }

  // The live connection, reconnecting first if there is none or it broke. In
  // cluster mode: the node used last (the seed at first) — for keyless use only.
  Result<Connection*> get() {
    if (cluster_) return cluster_->current();
    if (connection_ && !connection_->broken()) return &*connection_;
    connection_.reset();
    auto fresh = Connection::connect(options_);
    if (!fresh) return fresh.error();
    connection_.emplace(std::move(fresh).value());
    return &*connection_;
  }

  // One command on the live connection (reconnecting if needed). An error
  // reply comes back as a Reply.
  Result<Reply> command(const Args& args) {
    if (cluster_) return cluster_->command(args);
    auto connection = get();
    if (!connection) return connection.error();
    return (*connection)->command(args);
  }

  // A script (EVALSHA with NOSCRIPT fallback; cluster: EVAL routed by keys.front()).
  // An error reply comes back as an ErrorKind::reply Error.
  Result<Reply> run(Script& script, const Args& keys, const Args& args) {
    if (cluster_) {
      auto reply = cluster_->run(script, keys, args);
      if (reply && reply->is_error())
        return Error{ErrorKind::reply, options_.endpoint.to_string() + " (cluster): script failed: " +
                                           std::string(reply->text())};
      return reply;
    }
    auto connection = get();
    if (!connection) return connection.error();
    return script.run(**connection, keys, args);
  }

  const ConnectionOptions& options() const { return options_; }

 private:
  ConnectionOptions options_;
  std::optional<Connection> connection_;
  std::unique_ptr<ClusterConnection> cluster_;
};

}  // namespace locklab::redis
