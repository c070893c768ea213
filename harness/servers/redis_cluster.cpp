#include "servers/redis_cluster.h"

#include <algorithm>
#include <string>
#include <thread>

#include "redis/cluster_routing.h"
#include "redis/reply.h"

#include "servers/loopback_port.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

Result<std::unique_ptr<RedisServer>> start_node(const ClusterOptions& options) {
  // The cluster bus listens on port+10000 by default, which overflows for high
  // ephemeral ports: give every node an explicit, free cluster-port instead.
  auto bus_port = free_loopback_port();
  if (!bus_port) return bus_port.error();
  ServerOptions server = options.server;
  server.extra_args.insert(server.extra_args.end(),
                           {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",  // in --dir
                            "--cluster-port", std::to_string(*bus_port), "--cluster-node-timeout",
                            std::to_string(options.node_timeout.count())});
  return RedisServer::start(std::move(server));
}


// "field:value" out of CLUSTER INFO's text.
std::string info_field(std::string_view info, std::string_view field) {
  const auto at = info.find(std::string(field) + ":");
  if (at == std::string_view::npos) return {};
  const auto from = at + field.size() + 1;
  const auto end = info.find_first_of("\r\n", from);
  return std::string(info.substr(from, end == std::string_view::npos ? end : end - from));
}

}  // namespace

Result<redis::Reply> ask_cluster_node(const RedisServer& node, const redis::Args& args) {
  auto connection = redis::Connection::connect(node.connection_options());
  if (!connection) return connection.error();
  auto reply = connection->command(args);
  if (!reply) return reply.error();
  if (reply->is_error())
    return Error{ErrorKind::reply, node.endpoint().to_string() + ": " + args.front() + " " +
                                       (args.size() > 1 ? args[1] : "") + " failed: " + std::string(reply->text())};
  return reply;
}

Result<std::unique_ptr<RedisCluster>> RedisCluster::start(ClusterOptions options) {
  if (options.masters == 0) return Error{ErrorKind::usage, "cluster: at least one master"};
  std::unique_ptr<RedisCluster> cluster(new RedisCluster(std::move(options)));
  for (std::size_t i = 0; i < cluster->options_.masters; ++i) {
    auto node = start_node(cluster->options_);
    if (!node) return node.error();
    cluster->masters_.push_back(std::move(node).value());
  }
  for (std::size_t i = 0; i < cluster->options_.masters * cluster->options_.replicas_per_master; ++i) {
    auto node = start_node(cluster->options_);
    if (!node) return node.error();
    cluster->replicas_.push_back(std::move(node).value());
  }
  if (cluster->options_.before_forming)
    if (auto prepared = cluster->options_.before_forming(*cluster); !prepared) return prepared.error();
  if (auto formed = cluster->form(); !formed) return formed.error();
  return cluster;
}

Status RedisCluster::form() {
  // Equal slot ranges, the last master taking the remainder (master_of_slot()).
  const int per_master = redis::kClusterSlots / static_cast<int>(masters_.size());
  for (std::size_t i = 0; i < masters_.size(); ++i) {
    const int first = static_cast<int>(i) * per_master;
    const int last = i + 1 == masters_.size() ? redis::kClusterSlots - 1 : first + per_master - 1;
    auto added = ask_cluster_node(*masters_[i], {"CLUSTER", "ADDSLOTSRANGE", std::to_string(first), std::to_string(last)});
    if (!added) return added.error();
  }
  // MEET assumes the bus on port+10000 unless told: tell it the hub's cluster-port.
  const auto& hub = masters_.front()->endpoint();
  auto hub_bus = ask_cluster_node(*masters_.front(), {"CONFIG", "GET", "cluster-port"});
  if (!hub_bus) return hub_bus.error();
  if (hub_bus->size() != 2) return Error{ErrorKind::protocol, "CONFIG GET cluster-port: " + hub_bus->describe()};
  const std::string hub_bus_port(hub_bus->element(1).text());
  auto meet = [&](const RedisServer& node) -> Status {
    auto met = ask_cluster_node(node, {"CLUSTER", "MEET", hub.host, std::to_string(hub.port), hub_bus_port});
    if (!met) return met.error();
    return Done{};
  };
  for (std::size_t i = 1; i < masters_.size(); ++i)
    if (auto met = meet(*masters_[i]); !met) return met;
  for (const auto& replica : replicas_)
    if (auto met = meet(*replica); !met) return met;

  // A replica can follow its master only once it knows the master's node id.
  const auto deadline = std::chrono::steady_clock::now() + options_.ready_timeout;
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    const auto& master = *masters_[i / options_.replicas_per_master];
    auto id = ask_cluster_node(master, {"CLUSTER", "MYID"});
    if (!id) return id.error();
    for (;;) {
      auto followed = ask_cluster_node(*replicas_[i], {"CLUSTER", "REPLICATE", std::string(id->text())});
      if (followed) break;
      if (std::chrono::steady_clock::now() > deadline) return followed.error();
      std::this_thread::sleep_for(20ms);  // gossip has not told the replica about its master yet
    }
  }
  return wait_ready(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
}

Status RedisCluster::wait_ready(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string expected_nodes = std::to_string(size());
  std::string last_problem = "not polled";
  for (;;) {
    bool ready = true;
    for (const auto* list : {&masters_, &replicas_}) {
      for (const auto& node : *list) {
        auto info = ask_cluster_node(*node, {"CLUSTER", "INFO"});
        if (!info) {
          last_problem = info.error().message;
          ready = false;
          break;
        }
        const auto state = info_field(info->text(), "cluster_state");
        const auto known = info_field(info->text(), "cluster_known_nodes");
        const auto assigned = info_field(info->text(), "cluster_slots_ok");
        if (state != "ok" || known != expected_nodes || assigned != std::to_string(redis::kClusterSlots)) {
          last_problem = node->endpoint().to_string() + ": cluster_state " + state + ", known nodes " + known +
                         "/" + expected_nodes + ", slots ok " + assigned;
          ready = false;
          break;
        }
      }
      if (!ready) break;
    }
    if (ready) return Done{};
    if (std::chrono::steady_clock::now() > deadline)
      return Error{ErrorKind::timeout, "cluster not ready: " + last_problem};
    std::this_thread::sleep_for(20ms);
  }
}

std::vector<RedisServer*> RedisCluster::replicas_of(std::size_t master) const {
  std::vector<RedisServer*> replicas;
  const auto per = options_.replicas_per_master;
  for (std::size_t i = master * per; i < (master + 1) * per && i < replicas_.size(); ++i)
    replicas.push_back(replicas_[i].get());
  return replicas;
}

std::size_t RedisCluster::master_of_slot(int slot) const {
  const int per_master = redis::kClusterSlots / static_cast<int>(masters_.size());
  return std::min(static_cast<std::size_t>(slot / per_master), masters_.size() - 1);
}

redis::ConnectionOptions RedisCluster::seed() const {
  auto options = masters_.front()->connection_options();
  options.cluster = true;
  return options;
}

Status RedisCluster::flush_all() const {
  for (const auto& master : masters_)
    if (auto flushed = ask_cluster_node(*master, {"FLUSHALL"}); !flushed) return flushed.error();
  return Done{};
}

}  // namespace locklab::harness
