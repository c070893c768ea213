#include "replica_wait.h"

namespace locklab {

redis::Args wait_replicas_command(const LockConfig& config) {
  return {"WAIT", std::to_string(config.wait_replicas), std::to_string(config.wait_replicas_timeout.count())};
}

std::optional<std::string> replication_shortfall(const Result<redis::Reply>& wait_reply,
                                                 const LockConfig& config) {
  if (!wait_reply) return "WAIT failed: " + wait_reply.error().message;
  if (!wait_reply->is_integer()) return "WAIT answered " + wait_reply->describe();
  const long long acknowledged = wait_reply->integer();
  if (acknowledged >= config.wait_replicas) return std::nullopt;
  return "only " + std::to_string(acknowledged) + " of " + std::to_string(config.wait_replicas) +
         " replica(s) acknowledged the lock within " + std::to_string(config.wait_replicas_timeout.count()) +
         " ms; released it (a failover could lose it)";
}

}  // namespace locklab
