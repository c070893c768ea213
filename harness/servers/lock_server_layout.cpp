#include "servers/lock_server_layout.h"

namespace locklab::harness {

Result<std::unique_ptr<LockServerLayout>> LockServerLayout::start(const LayoutPlan& plan) {
  if (plan.lock_servers == 0) return Error{ErrorKind::usage, "a topology needs at least one lock server"};
  if ((plan.replica_via_proxy || plan.replicas > 0) && plan.lock_servers != 1)
    return Error{ErrorKind::usage, "replicas are for a single lock server (not a multi-node lock)"};
  if (plan.replica_via_proxy && plan.replicas > 1)
    return Error{ErrorKind::usage, "a failover topology has exactly one replica (--wait-replicas 0 or 1)"};
  std::unique_ptr<LockServerLayout> topology(new LockServerLayout(plan));
  if (auto started = topology->start_servers(); !started) return started.error();
  if (auto started = topology->start_proxies(); !started) return started.error();
  return topology;
}

// Proxies first (they lead to the servers), then the servers.
LockServerLayout::~LockServerLayout() {
  client_links_.clear();
  fronts_.clear();
  replication_.reset();
  owned_.clear();
}

Status LockServerLayout::start_servers() {
  ServerOptions options;
  options.clock_shim = plan_.clock_shim;
  if (plan_.replica_via_proxy) {
    auto pair = ProxiedReplication::start(options);
    if (!pair) return Error{pair.error().kind, "cannot start master + replica: " + pair.error().message};
    replication_ = std::move(pair).value();
    return Done{};
  }
  auto started = plan_.replicas > 0 ? start_master_with_replicas(static_cast<std::size_t>(plan_.replicas), options)
                                    : start_masters(plan_.lock_servers, options);
  if (!started) return Error{started.error().kind, "cannot start redis-server: " + started.error().message};
  owned_ = std::move(started).value();
  return Done{};
}

Status LockServerLayout::start_proxies() {
  if (plan_.replica_via_proxy) {
    for (std::size_t j = 0; j < size(); ++j) {
      auto front = TcpProxy::start(server(j).endpoint());
      if (!front) return front.error();
      fronts_.push_back(std::move(front).value());
    }
  }
  if (!plan_.client_proxies) return Done{};
  for (int i = 0; i < plan_.clients; ++i) {
    std::vector<std::unique_ptr<TcpProxy>> links;
    for (std::size_t j = 0; j < size(); ++j) {
      auto link = TcpProxy::start(endpoint(j).endpoint);
      if (!link) return link.error();
      links.push_back(std::move(link).value());
    }
    client_links_.push_back(std::move(links));
  }
  return Done{};
}

RedisServer& LockServerLayout::server(std::size_t j) const {
  if (replication_) return failed_over_ ? replication_->replica() : replication_->master();
  return *owned_.at(j);
}

std::vector<RedisServer*> LockServerLayout::servers() const {
  std::vector<RedisServer*> all;
  for (std::size_t j = 0; j < size(); ++j) all.push_back(&server(j));
  return all;
}

redis::ConnectionOptions LockServerLayout::endpoint(std::size_t j) const {
  redis::ConnectionOptions options = server(j).connection_options();
  if (!fronts_.empty()) options.endpoint = fronts_.at(j)->endpoint();
  return options;
}

std::vector<redis::ConnectionOptions> LockServerLayout::endpoints() const {
  std::vector<redis::ConnectionOptions> all;
  for (std::size_t j = 0; j < size(); ++j) all.push_back(endpoint(j));
  return all;
}

std::vector<redis::ConnectionOptions> LockServerLayout::client_endpoints(int client) const {
  std::vector<redis::ConnectionOptions> all = endpoints();
  if (client_links_.empty()) return all;
  for (std::size_t j = 0; j < all.size(); ++j) all[j].endpoint = client_link(client, j)->endpoint();
  return all;
}

TcpProxy* LockServerLayout::front(std::size_t j) const { return fronts_.empty() ? nullptr : fronts_.at(j).get(); }

TcpProxy* LockServerLayout::client_link(int client, std::size_t j) const {
  if (client_links_.empty() || client < 0 || static_cast<std::size_t>(client) >= client_links_.size()) return nullptr;
  return client_links_[static_cast<std::size_t>(client)].at(j).get();
}

std::vector<TcpProxy*> LockServerLayout::client_links(int client) const {
  std::vector<TcpProxy*> links;
  for (std::size_t j = 0; j < size(); ++j)
    if (TcpProxy* link = client_link(client, j)) links.push_back(link);
  return links;
}

Result<redis::Endpoint> LockServerLayout::fail_over() {
  if (!replication_ || fronts_.empty()) return Error{ErrorKind::usage, "this topology has no replica to fail over to"};
  if (failed_over_) return Error{ErrorKind::usage, "already failed over"};
  auto promoted = replication_->fail_over();
  if (!promoted) return promoted.error();
  failed_over_ = true;
  // The client links lead to the front: resetting the front's connections
  // resets theirs too, and their reconnections land on the promoted replica.
  fronts_.front()->retarget(promoted->endpoint);
  return promoted->endpoint;
}

void LockServerLayout::heal_client_links() {
  for (auto& links : client_links_)
    for (auto& link : links) {
      link->pass();
      link->heal();
    }
}

}  // namespace locklab::harness
