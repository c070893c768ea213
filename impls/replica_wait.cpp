#include "replica_wait.h"

#include "redis/script.h"

namespace locklab {

redis::Result<long long> wait_for_replicas(redis::Connection& connection, int replicas,
                                           std::chrono::milliseconds timeout) {
  auto reply = connection.command({"WAIT", std::to_string(replicas), std::to_string(timeout.count())});
  if (!reply) return reply.error();
  if (!reply->is_integer()) return redis::reply_error(connection, *reply, "WAIT");
  return reply->integer();
}

}  // namespace locklab
