// The lock servers of one run, and the network between them and the clients,
// laid out so that a fault can act on exactly the part it needs:
//
//   plain          client -> lock server j                     (no fault needs more)
//   fronts         client -> front proxy j -> lock server j    (failover: the front is
//                  retargeted to the promoted replica, like a Sentinel-aware client)
//   client links   client i -> its own proxy (i, j) -> ...     (net, unavailable: cut,
//                  hold, delay or drop the holder's links only)
//   replication    lock server 0 = master of a ProxiedReplication (failover; also the
//                  replica the --wait-replicas guard waits for)
//   clock shim     every lock server starts under the clock shim (clock-jump)
//
// The coordinator (probes, the clean slate, keys left) talks to endpoints() --
// through the fronts when there are any, so it follows a failover, never through
// a client's link, which a fault may have cut. Destroying the topology stops
// every proxy and server it started.
#pragma once

#include <memory>
#include <vector>

#include "redis/connection.h"
#include "redis/result.h"

#include "servers/proxied_replication.h"
#include "servers/redis_server.h"
#include "servers/tcp_proxy.h"

namespace locklab::harness {

struct LayoutPlan {
  std::size_t lock_servers = 1;
  int clients = 0;
  int replicas = 0;                // plain replicas of lock server 0 (the WAIT guard without failover)
  bool replica_via_proxy = false;  // lock server 0 = master of a ProxiedReplication (one replica)
  bool client_proxies = false;
  bool clock_shim = false;
};

class LockServerLayout {
 public:
  static Result<std::unique_ptr<LockServerLayout>> start(const LayoutPlan& plan);

  LockServerLayout(const LockServerLayout&) = delete;
  LockServerLayout& operator=(const LockServerLayout&) = delete;
  ~LockServerLayout();

  const LayoutPlan& plan() const { return plan_; }
  std::size_t size() const { return plan_.lock_servers; }

  // The process serving lock server j now (after a failover: the promoted replica).
  RedisServer& server(std::size_t j) const;
  std::vector<RedisServer*> servers() const;
  // Where the coordinator reaches lock server j: its front when there is one.
  redis::ConnectionOptions endpoint(std::size_t j) const;
  std::vector<redis::ConnectionOptions> endpoints() const;
  // Where client i reaches every lock server (its own links when client_proxies).
  std::vector<redis::ConnectionOptions> client_endpoints(int client) const;

  TcpProxy* front(std::size_t j) const;                  // nullptr without fronts
  TcpProxy* client_link(int client, std::size_t j) const;  // nullptr without client proxies
  std::vector<TcpProxy*> client_links(int client) const;   // one per lock server
  ProxiedReplication* replication() const { return replication_.get(); }

  // Failover of lock server 0: kill the master, promote the replica, send the
  // front (and so every client link) to it, and reset every connection that
  // still led to the old master. Returns the new master's endpoint.
  Result<redis::Endpoint> fail_over();

  // Every client link back to pass and healed (a fault's cleanup; idempotent).
  void heal_client_links();

 private:
  explicit LockServerLayout(LayoutPlan plan) : plan_(std::move(plan)) {}
  Status start_servers();
  Status start_proxies();

  LayoutPlan plan_;
  ServerList owned_;                                 // lock servers (and plain replicas)
  std::unique_ptr<ProxiedReplication> replication_;  // lock server 0 when replica_via_proxy
  bool failed_over_ = false;
  std::vector<std::unique_ptr<TcpProxy>> fronts_;                     // [j]
  std::vector<std::vector<std::unique_ptr<TcpProxy>>> client_links_;  // [client][j]
};

}  // namespace locklab::harness
