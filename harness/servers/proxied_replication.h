// A master and one replica whose replication link runs through a TcpProxy, so
// the master->replica stream can be held: the way to lose an acknowledged lock
// on failover deterministically. (SIGSTOP on the replica is not enough: the
// bytes wait in its socket buffer and are applied on SIGCONT.)
//
//   auto pair = ProxiedReplication::start();        // link up, offsets equal
//   pair->hold_replication();                       // master->replica bytes stay in the proxy
//   ... SET the lock on pair->master() ...
//   auto promoted = pair->fail_over();              // SIGKILL master, drop the held bytes,
//                                                   // REPLICAOF NO ONE on the replica
//   ... clients go to *promoted: the lock is not there ...
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "redis/result.h"

#include "servers/redis_server.h"
#include "servers/tcp_proxy.h"

namespace locklab::harness {

// The value of `field` in INFO text ("field:value\r\n"), or empty.
std::string info_field(std::string_view info, std::string_view field);
// `INFO <section>` of one server, on a connection of its own.
Result<std::string> server_info(const RedisServer& server, const std::string& section);

// Polled: `replica`'s link to its master is up and its replication offset
// equals `master`'s (so nothing written so far is missing on the replica).
Status wait_replica_in_sync(const RedisServer& master, const RedisServer& replica,
                            std::chrono::milliseconds timeout = std::chrono::milliseconds{10'000});

// One write of `key` (deleted after) that a replica must acknowledge: after a
// fresh sync the first REPLCONF ACK can take a second, and a short WAIT (the
// guard's) would miss it. In a cluster `key` must be in a slot of `master`.
Status wait_for_first_acknowledgement(const RedisServer& master, const std::string& key,
                                      std::chrono::milliseconds timeout);

class ProxiedReplication {
 public:
  // Master, proxy to it, replica of the proxy; returns once the link is up, the
  // replica acknowledges writes (ready for WAIT) and the offsets are equal.
  static Result<std::unique_ptr<ProxiedReplication>> start(ServerOptions options = {});

  RedisServer& master() { return *master_; }
  RedisServer& replica() { return *replica_; }
  TcpProxy& link() { return *proxy_; }

  // Master->replica bytes (the replication stream) stay in the proxy; the
  // replica's acknowledgements still reach the master.
  void hold_replication() { proxy_->hold(Direction::server_to_client); }
  void resume_replication() { proxy_->pass(Direction::server_to_client); }
  // Replication stream bytes the proxy holds now (> 0: a write has not reached the replica).
  std::uint64_t held_bytes() const { return proxy_->counters(Direction::server_to_client).buffered; }

  // Replica link up and replica offset == master offset (polled).
  Status wait_in_sync(std::chrono::milliseconds timeout = std::chrono::milliseconds{10'000});

  // SIGKILL the master, reset the replication link (held bytes are lost with
  // the master), promote the replica with REPLICAOF NO ONE, and wait until it
  // reports role:master. Returns how clients reach the new master.
  Result<redis::ConnectionOptions> fail_over();

 private:
  ProxiedReplication() = default;

  std::unique_ptr<RedisServer> master_;
  std::unique_ptr<TcpProxy> proxy_;
  std::unique_ptr<RedisServer> replica_;
};

}  // namespace locklab::harness
