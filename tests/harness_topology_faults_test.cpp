// The topology a fault needs (fronts, per-client links, a proxied replica, the
// clock shim) and the faults built on it, end to end through measure() against
// real redis-server processes: each fault reaches its expected verdict on every run.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "conditions.h"
#include "topology.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using harness::Topology;
using harness::TopologyPlan;
using harness::wait_until;

redis::Connection connect(const redis::ConnectionOptions& options) {
  auto connection = redis::Connection::connect(options);
  EXPECT_TRUE(connection) << connection.error().message;
  return std::move(connection).value();
}

std::unique_ptr<Topology> start(const TopologyPlan& plan) {
  auto topology = Topology::start(plan);
  EXPECT_TRUE(topology) << topology.error().message;
  return topology ? std::move(topology).value() : nullptr;
}

// ---- the topology ------------------------------------------------------------

TEST(Topology, ClientsReachEveryServerThroughTheirOwnLinks) {
  TopologyPlan plan;
  plan.lock_servers = 3;
  plan.clients = 2;
  plan.client_proxies = true;
  auto topology = start(plan);
  ASSERT_TRUE(topology);
  for (int client = 0; client < 2; ++client) {
    const auto endpoints = topology->client_endpoints(client);
    ASSERT_EQ(endpoints.size(), 3u);
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(endpoints[j].endpoint.port, topology->client_link(client, j)->endpoint().port);
      EXPECT_NE(endpoints[j].endpoint.port, topology->server(j).endpoint().port);
      auto c = connect(endpoints[j]);
      ASSERT_TRUE(c.command({"SET", "from-" + std::to_string(client), "x"}));
    }
  }
  // Each link leads to its own server: what client 0 wrote through link (0, 2) is on server 2.
  auto direct = connect(topology->server(2).connection_options());
  EXPECT_TRUE(direct.command({"EXISTS", "from-0"})->integer() == 1);
}

TEST(Topology, CuttingOneClientsLinkLeavesTheOthersAlone) {
  TopologyPlan plan;
  plan.lock_servers = 1;
  plan.clients = 2;
  plan.client_proxies = true;
  auto topology = start(plan);
  ASSERT_TRUE(topology);
  auto c0 = connect(topology->client_endpoints(0)[0]);
  auto c1 = connect(topology->client_endpoints(1)[0]);
  topology->client_link(0, 0)->cut();
  EXPECT_FALSE(c0.command({"PING"})) << "client 0's link is cut";
  EXPECT_TRUE(c1.command({"PING"})) << "client 1's link is not";
  topology->heal_client_links();
  auto again = connect(topology->client_endpoints(0)[0]);
  EXPECT_TRUE(again.command({"PING"}));
}

TEST(Topology, FailoverSendsTheFrontAndEveryClientLinkToThePromotedReplica) {
  TopologyPlan plan;
  plan.lock_servers = 1;
  plan.clients = 1;
  plan.replica_via_proxy = true;
  plan.client_proxies = true;
  auto topology = start(plan);
  ASSERT_TRUE(topology);
  const int old_master_port = topology->server(0).endpoint().port;
  auto client = connect(topology->client_endpoints(0)[0]);
  topology->replication()->hold_replication();
  ASSERT_TRUE(client.command({"SET", "lock", "A"})->is_status("OK"));
  ASSERT_TRUE(wait_until([&] { return topology->replication()->held_bytes() > 0; }, 5s));

  auto promoted = topology->fail_over();
  ASSERT_TRUE(promoted) << promoted.error().message;
  EXPECT_NE(promoted->port, old_master_port);
  EXPECT_EQ(topology->server(0).endpoint().port, promoted->port);
  EXPECT_FALSE(client.command({"GET", "lock"})) << "the connection to the old master was reset";
  auto reconnected = connect(topology->client_endpoints(0)[0]);
  EXPECT_TRUE(reconnected.command({"GET", "lock"})->is_nil()) << "the new master never got A's lock";
  auto coordinator = connect(topology->endpoint(0));
  EXPECT_TRUE(coordinator.command({"SET", "lock", "B", "NX"})->is_status("OK")) << "a second client can take it";
}

TEST(Topology, RefusesReplicasForAMultiNodeLock) {
  TopologyPlan plan;
  plan.lock_servers = 5;
  plan.replica_via_proxy = true;
  auto topology = Topology::start(plan);
  ASSERT_FALSE(topology);
  EXPECT_EQ(topology.error().kind, ErrorKind::usage);
}

}  // namespace
}  // namespace locklab::testing
