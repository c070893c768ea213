// redis::FanOut against three real redis-servers: every reply in one round,
// one shared deadline, and what each slot says about its request (answered,
// refused, never sent, or sent and unanswered = outcome unknown).
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "redis/fanout.h"

#include "fixtures/masters_fixture.h"
#include "servers/redis_server.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class FanOutTest : public MastersTest<3> {
 protected:
  static redis::FanOut fan_out() {
    std::vector<redis::ConnectionOptions> options;
    for (const auto& server : servers_) options.push_back(server->connection_options());
    return redis::FanOut(std::move(options));
  }

  redis::Reply admin(std::size_t server, const redis::Args& args) {
    auto reply = admins_.at(server).command(args);
    EXPECT_TRUE(reply) << reply.error().message;
    return reply ? std::move(reply).value() : redis::Reply(nullptr);
  }

  // Bounded wait until `server` has read a request of `command` and holds it
  // unexecuted (CLIENT PAUSE WRITE shows such a client as cmd=<command>).
  bool wait_until_parked(std::size_t server, const std::string& command) {
    const auto deadline = Clock::now() + 5s;
    while (Clock::now() < deadline) {
      if (std::string(admin(server, {"CLIENT", "LIST"}).text()).find("cmd=" + command + " ") != std::string::npos)
        return true;
      std::this_thread::sleep_for(1ms);
    }
    return false;
  }

};

TEST_F(FanOutTest, EveryServerAnswersInOneRoundCountedAsOneRoundTrip) {
  auto nodes = fan_out();
  ASSERT_EQ(nodes.connect_all().connected, 3u);
  const auto before = redis::traffic();
  const auto replies = nodes.run({"INCR", "counter"}, 1s);
  const auto after = redis::traffic();
  ASSERT_EQ(replies.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(replies[i]) << replies[i].error().message;
    EXPECT_EQ(replies[i]->integer(), 1) << "slot " << i << " is server " << i;
    EXPECT_EQ(admin(i, {"GET", "counter"}).string(), "1");
  }
  EXPECT_EQ(after.commands - before.commands, 3u) << "one command per server";
  EXPECT_EQ(after.exchanges - before.exchanges, 3u) << "one exchange per server";
  EXPECT_EQ(after.round_trips - before.round_trips, 1u) << "the client waits once: one round trip (docs/harness.md)";

  // Node after node, the same three commands are three waits.
  const auto before_sequential = redis::traffic();
  for (std::size_t i = 0; i < 3; ++i) admin(i, {"INCR", "counter"});
  EXPECT_EQ(redis::traffic().round_trips - before_sequential.round_trips, 3u);
}

TEST_F(FanOutTest, AnErrorReplyIsARefusalNotAnUnknownOutcome) {
  admin(1, {"SET", "counter", "not a number"});
  auto nodes = fan_out();
  const auto replies = nodes.run({"INCR", "counter"}, 1s);
  ASSERT_FALSE(replies[1]);
  EXPECT_EQ(replies[1].error().kind, ErrorKind::reply);
  EXPECT_FALSE(replies[1].error().outcome_unknown());
  EXPECT_NE(replies[1].error().message.find(nodes.name(1)), std::string::npos) << replies[1].error().message;
  EXPECT_TRUE(replies[0] && replies[2]);
}

// A SIGSTOPped server keeps its port and takes the request into its socket
// buffer: the slot times out at the shared deadline as outcome-unknown, the
// others answer, and on SIGCONT the request is indeed applied.
TEST_F(FanOutTest, APausedServerTimesOutAsOutcomeUnknownWhileTheOthersAnswer) {
  auto nodes = fan_out();
  ASSERT_EQ(nodes.connect_all().connected, 3u);
  server(1).pause();
  const milliseconds timeout = 200ms;
  const auto start = Clock::now();
  const auto replies = nodes.run({"SET", "k", "v"}, timeout);
  const auto took = Clock::now() - start;

  EXPECT_TRUE(replies[0] && replies[0]->is_status("OK"));
  EXPECT_TRUE(replies[2] && replies[2]->is_status("OK"));
  ASSERT_FALSE(replies[1]);
  EXPECT_EQ(replies[1].error().kind, ErrorKind::timeout) << replies[1].error().message;
  EXPECT_TRUE(replies[1].error().outcome_unknown());
  EXPECT_GE(took, timeout) << "waited for the paused server up to the deadline";
  EXPECT_LT(took, 10 * timeout) << "and no longer (bounded, not a hang)";

  server(1).resume();
  const auto deadline = Clock::now() + 5s;
  while (Clock::now() < deadline && !admin(1, {"GET", "k"}).string()) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(admin(1, {"GET", "k"}).string(), "v") << "the unanswered SET was applied after all";

  const auto next = nodes.run({"PING"}, 1s);  // the timed-out connection was replaced
  for (const auto& reply : next) EXPECT_TRUE(reply && reply->is_status("PONG"));
}

// Nothing is sent to a server that cannot be reached: its slot is a known
// failure, and the traffic counters count only the two requests that went out.
TEST_F(FanOutTest, ADownServerFailsBeforeTheSend) {
  server(2).crash();
  auto nodes = fan_out();
  const auto reachable = nodes.connect_all();
  EXPECT_EQ(reachable.connected, 2u);
  EXPECT_NE(reachable.first_error.find(nodes.name(2)), std::string::npos) << reachable.first_error;

  const auto before = redis::traffic();
  const auto replies = nodes.run({"SET", "k", "v"}, 1s);
  const auto after = redis::traffic();
  ASSERT_FALSE(replies[2]);
  EXPECT_FALSE(replies[2].error().outcome_unknown()) << to_string(replies[2].error().kind);
  EXPECT_TRUE(replies[0] && replies[1]);
  EXPECT_EQ(after.commands - before.commands, 2u);
  EXPECT_EQ(after.exchanges - before.exchanges, 2u);
  EXPECT_EQ(after.round_trips - before.round_trips, 1u);
}

// A server that died between rounds: its old connection is seen closed and
// replaced before the send, so the slot is a known failure, not "maybe applied".
TEST_F(FanOutTest, AServerThatDiedBetweenRoundsFailsBeforeTheSend) {
  auto nodes = fan_out();
  ASSERT_EQ(nodes.connect_all().connected, 3u);
  server(2).crash();
  const auto before = redis::traffic();
  const auto replies = nodes.run({"SET", "k", "v"}, 1s);
  ASSERT_FALSE(replies[2]);
  EXPECT_FALSE(replies[2].error().outcome_unknown())
      << to_string(replies[2].error().kind) << ": " << replies[2].error().message;
  EXPECT_EQ(redis::traffic().commands - before.commands, 2u);

  ASSERT_TRUE(server(2).restart());
  const auto after_restart = nodes.run({"PING"}, 1s);
  EXPECT_TRUE(after_restart[2] && after_restart[2]->is_status("PONG")) << "reconnected";
}

// The server read our request, then closed the connection without a reply
// (here: CLIENT PAUSE WRITE holds the SET, CLIENT KILL closes the client).
// Closed after the send = maybe applied; the round ends when the close
// arrives, not at the deadline.
TEST_F(FanOutTest, AConnectionClosedAfterTheSendIsOutcomeUnknown) {
  auto nodes = fan_out();
  ASSERT_EQ(nodes.connect_all().connected, 3u);
  admin(0, {"CLIENT", "PAUSE", "10000", "WRITE"});
  const auto start = Clock::now();
  auto round = std::async(std::launch::async, [&nodes] { return nodes.run({"SET", "k", "v"}, 5s); });
  ASSERT_TRUE(wait_until_parked(0, "set"));
  admin(0, {"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  const auto replies = round.get();
  admin(0, {"CLIENT", "UNPAUSE"});

  ASSERT_FALSE(replies[0]);
  EXPECT_EQ(replies[0].error().kind, ErrorKind::closed) << replies[0].error().message;
  EXPECT_TRUE(replies[0].error().outcome_unknown());
  EXPECT_TRUE(replies[1] && replies[2]);
  EXPECT_LT(Clock::now() - start, 5s) << "the close ended the wait";
}

// Redlock's release and extend read a round as "how many said 1, how many 0";
// an error reply or a missing reply is neither, and the first one is kept for
// the error line.
TEST_F(FanOutTest, CountIntegersTalliesRepliesByValueAndTheRestAsUnanswered) {
  admin(0, {"SET", "tally", "0"});
  admin(1, {"SET", "tally", "0"});
  admin(2, {"SET", "tally", "not a number"});
  auto nodes = fan_out();
  const auto counts = redis::count_integers(nodes.run({"INCR", "tally"}, 1s));
  EXPECT_EQ(counts.of(1), 2u);
  EXPECT_EQ(counts.of(0), 0u);
  EXPECT_EQ(counts.unanswered, 1u);
  EXPECT_NE(counts.first_unanswered.find("not an integer"), std::string::npos) << counts.first_unanswered;
}

// A dead server may cost a round no more than the round's timeout: connecting
// included, but a shorter connect timeout stays, and 0 still allows 1 ms.
TEST(FanOutOptions, WithinBoundsConnectAndCommandByTheRoundTimeout) {
  redis::ConnectionOptions patient, hasty;
  patient.connect_timeout = 5000ms;
  hasty.connect_timeout = 3ms;
  const auto bounded = redis::within({patient, hasty}, 20ms);
  EXPECT_EQ(bounded[0].connect_timeout, 20ms);
  EXPECT_EQ(bounded[0].command_timeout, 20ms);
  EXPECT_EQ(bounded[1].connect_timeout, 3ms);
  EXPECT_EQ(bounded[1].command_timeout, 20ms);
  EXPECT_EQ(redis::within({patient}, 0ms)[0].connect_timeout, 1ms);
}

}  // namespace
}  // namespace locklab::testing
