#include "servers/proxied_replication.h"

#include <string>
#include <string_view>

#include "support/conditions.h"

namespace locklab::harness {

using namespace std::chrono_literals;

std::string info_field(std::string_view info, std::string_view field) {
  const std::string needle = std::string(field) + ":";
  for (std::size_t at = info.find(needle); at != std::string_view::npos; at = info.find(needle, at + 1)) {
    if (at != 0 && info[at - 1] != '\n') continue;
    const auto start = at + needle.size();
    const auto end = info.find_first_of("\r\n", start);
    return std::string(info.substr(start, end == std::string_view::npos ? info.size() - start : end - start));
  }
  return {};
}

Result<std::string> server_info(const RedisServer& server, const std::string& section) {
  auto connection = redis::Connection::connect(server.connection_options());
  if (!connection) return connection.error();
  auto reply = connection->command({"INFO", section});
  if (!reply) return reply.error();
  if (!reply->is_string()) return Error{ErrorKind::reply, "INFO " + section + ": " + reply->describe()};
  return std::string(reply->text());
}

namespace {

Result<std::string> replication_info(const RedisServer& server) { return server_info(server, "replication"); }

}  // namespace

Status wait_for_first_acknowledgement(const RedisServer& master, const std::string& key,
                                      std::chrono::milliseconds timeout) {
  auto connection = redis::Connection::connect(master.connection_options());
  if (!connection) return connection.error();
  auto acked = connection->command({"SET", key, "1"});
  if (acked && acked->is_error()) return Error{ErrorKind::reply, "SET " + key + ": " + std::string(acked->text())};
  if (acked) acked = connection->command({"WAIT", "1", std::to_string(timeout.count())});
  if (!acked) return acked.error();
  (void)connection->command({"DEL", key});
  if (acked->integer() < 1)
    return Error{ErrorKind::timeout, "the replica did not acknowledge a write within " +
                                         std::to_string(timeout.count()) + " ms"};
  return Done{};
}

Status wait_replica_in_sync(const RedisServer& master, const RedisServer& replica, std::chrono::milliseconds timeout) {
  std::string last = "no INFO yet";
  const bool synced = wait_until(
      [&] {
        auto master_info = replication_info(master);
        auto replica_info = replication_info(replica);
        if (!master_info || !replica_info) {
          last = !master_info ? master_info.error().message : replica_info.error().message;
          return false;
        }
        const auto master_offset = info_field(*master_info, "master_repl_offset");
        const auto replica_offset = info_field(*replica_info, "slave_repl_offset");
        last = "link " + info_field(*replica_info, "master_link_status") + ", master offset " + master_offset +
               ", replica offset " + replica_offset;
        return info_field(*replica_info, "master_link_status") == "up" && !master_offset.empty() &&
               master_offset == replica_offset;
      },
      timeout, 20ms);
  if (synced) return Done{};
  return Error{ErrorKind::timeout, "replica " + replica.endpoint().to_string() + " not in sync: " + last};
}

Result<std::unique_ptr<ProxiedReplication>> ProxiedReplication::start(ServerOptions options) {
  std::unique_ptr<ProxiedReplication> pair(new ProxiedReplication());
  options.replica_of.reset();
  auto master = RedisServer::start(options);
  if (!master) return master.error();
  pair->master_ = std::move(master).value();
  auto proxy = TcpProxy::start(pair->master_->endpoint());
  if (!proxy) return proxy.error();
  pair->proxy_ = std::move(proxy).value();
  options.replica_of = pair->proxy_->endpoint();
  auto replica = RedisServer::start(options);
  if (!replica) return replica.error();
  pair->replica_ = std::move(replica).value();
  if (auto synced = pair->wait_in_sync(options.start_timeout); !synced) return synced.error();
  if (auto acking = wait_for_first_acknowledgement(*pair->master_, "locklab:replication-warm-up", options.start_timeout);
      !acking)
    return acking.error();
  if (auto synced = pair->wait_in_sync(options.start_timeout); !synced) return synced.error();
  return pair;
}

Status ProxiedReplication::wait_in_sync(std::chrono::milliseconds timeout) {
  return wait_replica_in_sync(*master_, *replica_, timeout);
}

Result<redis::ConnectionOptions> ProxiedReplication::fail_over() {
  master_->crash();
  // Whatever the proxy still held dies with the master: cut() resets the link
  // and discards it, so the replica never receives it.
  proxy_->cut();
  auto connection = redis::Connection::connect(replica_->connection_options());
  if (!connection) return connection.error();
  auto promoted = connection->command({"REPLICAOF", "NO", "ONE"});
  if (!promoted) return promoted.error();
  if (!promoted->is_status("OK")) return Error{ErrorKind::reply, "REPLICAOF NO ONE: " + promoted->describe()};
  const bool is_master = wait_until(
      [&] {
        auto info = replication_info(*replica_);
        return info && info_field(*info, "role") == "master";
      },
      5000ms, 10ms);
  if (!is_master) return Error{ErrorKind::timeout, "replica did not become a master"};
  return replica_->connection_options();
}

}  // namespace locklab::harness
