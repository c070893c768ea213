// Starts a real Redis Cluster on loopback: N masters (3 by default), optionally
// R replicas per master, each a RedisServer (own temp dir, stopped with it).
//
// No redis-cli needed: every node starts with cluster-enabled yes and its
// nodes.conf in its own dir, the masters take equal slot ranges with CLUSTER
// ADDSLOTSRANGE, every node MEETs the first one, each replica REPLICATEs its
// master, and start() returns once every node reports cluster_state:ok, knows
// every other node, and agrees on the slot map (polled, bounded).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "redis/connection.h"

#include "servers/redis_server.h"

namespace locklab::harness {

class RedisCluster;

struct ClusterOptions {
  std::size_t masters = 3;
  std::size_t replicas_per_master = 0;
  ServerOptions server;  // applied to every node (cluster arguments are added)
  std::chrono::milliseconds node_timeout{5'000};  // cluster-node-timeout
  std::chrono::milliseconds ready_timeout{30'000};
  // Runs once every node has started, before the cluster forms (slots, MEET,
  // REPLICATE): e.g. a master told to announce a proxy's port, which its
  // replica then follows (servers/cluster_failover_topology.h). An error stops start().
  std::function<Status(const RedisCluster&)> before_forming;
};

class RedisCluster {
 public:
  static Result<std::unique_ptr<RedisCluster>> start(ClusterOptions options = {});

  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;
  ~RedisCluster() = default;  // every RedisServer stops itself

  // masters()[i] owns slot range i of masters().size(); replicas_of(i) follow it.
  const ServerList& masters() const { return masters_; }
  std::vector<RedisServer*> replicas_of(std::size_t master) const;
  const ServerList& replicas() const { return replicas_; }
  // The index of the master that start() gives `slot` (known before the cluster forms).
  std::size_t master_of_slot(int slot) const;
  std::size_t size() const { return masters_.size() + replicas_.size(); }

  // Connection options for a lock or client: the first master as seed, with
  // ConnectionOptions::cluster set (redis::Link routes by key).
  redis::ConnectionOptions seed() const;

  // Every node reports cluster_state:ok and the same number of known nodes.
  Status wait_ready(std::chrono::milliseconds timeout) const;

  // FLUSHALL on every master (tests between cases).
  Status flush_all() const;

 private:
  explicit RedisCluster(ClusterOptions options) : options_(std::move(options)) {}
  Status form();

  ClusterOptions options_;
  ServerList masters_;
  ServerList replicas_;  // replicas_of(i) = replicas_[i*R .. i*R+R)
};

// One command on a fresh connection to `node`; an error reply becomes an Error
// naming the node and the command.
Result<redis::Reply> ask_cluster_node(const RedisServer& node, const redis::Args& args);

}  // namespace locklab::harness
