// The harness's TCP proxy against a real redis-server, through hiredis: each
// mode does to the bytes what its name says, in one direction or both.
#include <chrono>
#include <memory>
#include <string>

#include "fixtures/proxy_fixture.h"
#include "servers/tcp_proxy.h"
#include "support/conditions.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using harness::Direction;
using harness::wait_until;
using harness::TcpProxy;
using Clock = std::chrono::steady_clock;

class TcpProxyTest : public ProxiedRedisTest {
 protected:
  bool key_is(const std::string& key, const std::string& value) { return run({"GET", key}).string() == value; }
};

TEST_F(TcpProxyTest, PassForwardsBothWays) {
  auto client = through_proxy();
  auto pong = client.command({"PING"});
  ASSERT_TRUE(pong) << pong.error().message;
  EXPECT_TRUE(pong->is_status("PONG"));
  EXPECT_EQ(proxy_->open_connections(), 1u);
  EXPECT_GT(proxy_->counters(Direction::client_to_server).forwarded, 0u);
  EXPECT_GT(proxy_->counters(Direction::server_to_client).forwarded, 0u);
  EXPECT_EQ(proxy_->counters(Direction::both).buffered, 0u);
}

TEST_F(TcpProxyTest, DelayedRepliesArriveNoSoonerThanTheDelayAndInOrder) {
  auto client = through_proxy();
  constexpr auto delay = 200ms;
  proxy_->delay(delay, Direction::server_to_client);
  const auto sent = Clock::now();
  for (int i = 0; i < 50; ++i) client.append({"INCR", "counter"});
  auto replies = client.read_pending();
  const auto elapsed = Clock::now() - sent;
  ASSERT_TRUE(replies) << replies.error().message;
  ASSERT_EQ(replies->size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ((*replies)[static_cast<std::size_t>(i)].integer(), i + 1);
  EXPECT_GE(elapsed, delay);
  EXPECT_LT(elapsed, 4s) << "a generous bound: the delay is not a hang";

  proxy_->pass();
  const auto undelayed = Clock::now();
  ASSERT_TRUE(client.command({"PING"}));
  EXPECT_LT(Clock::now() - undelayed, delay) << "pass again: no delay left behind";
}

TEST_F(TcpProxyTest, DelayedRequestIsAppliedNoSoonerThanTheDelay) {
  auto client = through_proxy();
  constexpr auto delay = 300ms;
  proxy_->delay(delay, Direction::client_to_server);
  const auto sent = Clock::now();
  ASSERT_TRUE(client.send({"SET", "k", "late"}));
  ASSERT_TRUE(wait_until([&] { return key_is("k", "late"); }, 5s, 1ms));
  EXPECT_GE(Clock::now() - sent, delay);
  auto reply = client.read_until(Clock::now() + 5s);
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_TRUE(reply->is_status("OK"));
}

TEST_F(TcpProxyTest, HeldRequestIsAppliedOnlyAfterResume) {
  auto client = through_proxy();
  proxy_->hold(Direction::client_to_server);
  ASSERT_TRUE(client.send({"SET", "k", "v"}));
  ASSERT_TRUE(wait_until([&] { return proxy_->counters(Direction::client_to_server).buffered > 0; }, 5s));
  EXPECT_TRUE(run({"GET", "k"}).is_nil()) << "held: the server has not seen the SET";
  EXPECT_EQ(proxy_->counters(Direction::client_to_server).forwarded, 0u);

  proxy_->pass(Direction::client_to_server);
  auto reply = client.read_until(Clock::now() + 5s);
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_TRUE(reply->is_status("OK"));
  EXPECT_TRUE(key_is("k", "v"));
  EXPECT_EQ(proxy_->counters(Direction::client_to_server).buffered, 0u);
}

// A cluster master's proxy (harness/servers/cluster_failover_topology.h): its one open
// connection, the replication link, is held; clients that connect later pass.
TEST_F(TcpProxyTest, OpenConnectionsModeHoldsOnlyTheConnectionsOpenNow) {
  auto early = through_proxy();
  ASSERT_TRUE(early.command({"PING"}));
  proxy_->set_open_connections_mode(Direction::server_to_client, harness::ProxyMode::hold());
  ASSERT_TRUE(early.send({"SET", "early", "1"}));
  ASSERT_TRUE(wait_until([&] { return proxy_->counters(Direction::server_to_client).buffered > 0; }, 5s))
      << "the early connection's reply stays in the proxy";
  EXPECT_TRUE(wait_until([&] { return key_is("early", "1"); }, 5s)) << "requests still pass: only replies are held";

  auto late = through_proxy();
  auto pong = late.command({"PING"});
  ASSERT_TRUE(pong) << "a later connection passes: " << pong.error().message;
  EXPECT_TRUE(pong->is_status("PONG"));
  EXPECT_GT(proxy_->counters(Direction::server_to_client).buffered, 0u) << "the early reply is still held";

  // The proxy-wide mode takes over every connection again.
  proxy_->pass(Direction::server_to_client);
  auto reply = early.read_until(Clock::now() + 5s);
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_TRUE(reply->is_status("OK"));
  EXPECT_EQ(proxy_->counters(Direction::server_to_client).buffered, 0u);
}

TEST_F(TcpProxyTest, DiscardedHeldRequestNeverReachesTheServer) {
  auto client = through_proxy(300ms);
  proxy_->hold(Direction::client_to_server);
  ASSERT_TRUE(client.send({"SET", "k", "v"}));
  ASSERT_TRUE(wait_until([&] { return proxy_->counters(Direction::client_to_server).buffered > 0; }, 5s));
  proxy_->discard_buffered(Direction::client_to_server);
  proxy_->pass();
  auto reply = client.read_until(Clock::now() + 300ms);
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, ErrorKind::timeout);
  EXPECT_TRUE(run({"GET", "k"}).is_nil());
  EXPECT_GT(proxy_->counters(Direction::client_to_server).dropped, 0u);
}

// The indeterminate case: the request is applied, the reply is lost.
TEST_F(TcpProxyTest, DroppedRepliesLeaveTheOutcomeUnknown) {
  auto client = through_proxy(300ms);
  proxy_->drop(Direction::server_to_client);
  auto reply = client.command({"SET", "k", "applied"});
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, ErrorKind::timeout);
  EXPECT_TRUE(reply.error().outcome_unknown());
  EXPECT_TRUE(wait_until([&] { return key_is("k", "applied"); }, 5s)) << "the server applied it";
  EXPECT_GT(proxy_->counters(Direction::server_to_client).dropped, 0u);
}

TEST_F(TcpProxyTest, CutResetsOpenAndNewConnectionsUntilHealed) {
  auto client = through_proxy(5s);
  ASSERT_TRUE(client.command({"PING"}));
  proxy_->cut();
  EXPECT_EQ(proxy_->open_connections(), 0u);
  const auto sent = Clock::now();
  auto reply = client.command({"PING"});
  ASSERT_FALSE(reply);
  EXPECT_NE(reply.error().kind, ErrorKind::timeout) << reply.error().message;
  EXPECT_LT(Clock::now() - sent, 2s) << "a reset, not a 5 s timeout";

  // A new connection is reset too: connect or its first command fails, and fast.
  redis::ConnectionOptions options = server().connection_options();
  options.endpoint = proxy_->endpoint();
  auto fresh = redis::Connection::connect(options);
  if (fresh) {
    auto pong = fresh->command({"PING"});
    ASSERT_FALSE(pong);
    EXPECT_NE(pong.error().kind, ErrorKind::timeout) << pong.error().message;
  }

  proxy_->heal();
  auto healed = through_proxy();
  auto pong = healed.command({"PING"});
  ASSERT_TRUE(pong) << pong.error().message;
}

// A cut resets every open link, but only a link with a request on its way, or
// a connection made while cut, counts as a refusal (review 2 #6): an idle
// pooled connection's reset says nothing of any request.
TEST_F(TcpProxyTest, ACutCountsIdleLinksApartFromRefusals) {
  auto idle = through_proxy(5s);
  ASSERT_TRUE(idle.command({"PING"}));
  ASSERT_TRUE(wait_until([&] { return proxy_->open_connections() == 1u; }, 2s));
  proxy_->cut();
  EXPECT_EQ(proxy_->refused_connections(), 0u);
  EXPECT_EQ(proxy_->idle_connections_reset(), 1u);
  redis::ConnectionOptions options = server().connection_options();
  options.endpoint = proxy_->endpoint();
  auto fresh = redis::Connection::connect(options);
  if (fresh) {
    EXPECT_FALSE(fresh->command({"PING"}));
  }
  EXPECT_TRUE(wait_until([&] { return proxy_->refused_connections() == 1u; }, 2s))
      << "the connection made while cut is a refusal";
  EXPECT_EQ(proxy_->idle_connections_reset(), 1u);
  proxy_->heal();
}

// refuse(): an idle connection stays open; one that sends a request is reset
// before any of it reaches the server, and counted with the time it happened.
TEST_F(TcpProxyTest, RefuseResetsAConnectionOnlyAsItSendsARequest) {
  auto idle = through_proxy(5s);
  auto sender = through_proxy(5s);
  ASSERT_TRUE(idle.command({"PING"}));
  ASSERT_TRUE(sender.command({"PING"}));
  const auto before = Clock::now();
  proxy_->refuse();
  EXPECT_EQ(proxy_->open_connections(), 2u) << "nothing is reset before a request comes";
  const auto sent = Clock::now();
  auto refused = sender.command({"SET", "refused", "1"});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().kind, ErrorKind::timeout) << refused.error().message;
  EXPECT_LT(Clock::now() - sent, 2s) << "a reset, not a 5 s timeout";
  EXPECT_EQ(proxy_->refused_connections(), 1u);
  EXPECT_EQ(proxy_->refused_connections_until(before), 0u) << "refused after refuse() began, not before";
  EXPECT_EQ(proxy_->refused_connections_until(Clock::now()), 1u);
  EXPECT_EQ(proxy_->idle_connections_reset(), 0u);
  proxy_->heal();
  auto pong = idle.command({"PING"});
  ASSERT_TRUE(pong) << "the idle connection was left open: " << pong.error().message;
  EXPECT_TRUE(run({"GET", "refused"}).is_nil()) << "the refused SET reached the server";
}

TEST_F(TcpProxyTest, DestroyingTheProxyClosesItsConnections) {
  auto client = through_proxy(5s);
  ASSERT_TRUE(client.command({"PING"}));
  proxy_.reset();
  const auto sent = Clock::now();
  auto reply = client.command({"PING"});
  ASSERT_FALSE(reply);
  EXPECT_LT(Clock::now() - sent, 2s);
}

}  // namespace
}  // namespace locklab::testing
