// The Redis plumbing against a real server: connection, errors as values,
// pipelining, deadline reads, scripts, and the server launcher itself.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "redis/link.h"
#include "redis/script.h"

#include "fixtures/redis_fixture.h"
#include "fixtures/socket_probe.h"
#include "support/conditions.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using redis::Connection;
using redis::ConnectionOptions;
using harness::wait_until;

class PlumbingTest : public RedisTest {};

TEST_F(PlumbingTest, CommandsReturnTypedReplies) {
  EXPECT_TRUE(run({"SET", "k", "v"}).is_status("OK"));
  EXPECT_EQ(run({"GET", "k"}).string(), "v");
  EXPECT_TRUE(run({"GET", "missing"}).is_nil());
  EXPECT_EQ(run({"INCR", "n"}).integer(), 1);
  EXPECT_TRUE(run({"INCR", "k"}).is_error());
}

TEST_F(PlumbingTest, BinarySafeArguments) {
  const std::string value("a\0b\r\nc", 6);
  run({"SET", "bin", value});
  EXPECT_EQ(run({"GET", "bin"}).string(), value);
}

TEST_F(PlumbingTest, PipelineIsOneRoundTrip) {
  const auto before = redis::traffic();
  for (int i = 0; i < 10; ++i) admin().append({"INCR", "p"});
  auto replies = admin().read_pending();
  ASSERT_TRUE(replies) << replies.error().message;
  ASSERT_EQ(replies->size(), 10u);
  EXPECT_EQ(replies->back().integer(), 10);
  const auto after = redis::traffic();
  EXPECT_EQ(after.commands - before.commands, 10u);
  EXPECT_EQ(after.round_trips - before.round_trips, 1u);
}

TEST_F(PlumbingTest, UnreachableServerIsAnErrorNotAHang) {
  ConnectionOptions options;
  options.endpoint = {"127.0.0.1", 1};  // nothing listens on port 1
  options.connect_timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  auto connection = Connection::connect(options);
  ASSERT_FALSE(connection);
  EXPECT_EQ(connection.error().kind, ErrorKind::io);
  EXPECT_NE(connection.error().message.find("127.0.0.1:1"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(PlumbingTest, PausedServerTimesOutWithinCommandTimeout) {
  auto options = server().connection_options();
  options.command_timeout = 200ms;
  auto connection = Connection::connect(options);
  ASSERT_TRUE(connection);
  server().pause();
  const auto start = std::chrono::steady_clock::now();
  auto reply = connection->command({"PING"});
  const auto took = std::chrono::steady_clock::now() - start;
  server().resume();
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, ErrorKind::timeout);
  EXPECT_TRUE(reply.error().outcome_unknown());
  EXPECT_LT(took, 2s);
  // hiredis contexts are dead after an error: the connection says so and fails fast.
  EXPECT_TRUE(connection->broken());
  EXPECT_FALSE(connection->command({"PING"}));
}

// "Was the request applied?" One answer: once the request is on the wire, a
// reset (ECONNRESET: the server died with the request unread) means maybe,
// exactly like a timeout or a close. Before, only timeout/closed said so.
TEST_F(PlumbingTest, ResetAfterTheRequestWasSentIsOutcomeUnknown) {
  auto connection = Connection::connect(server().connection_options());
  ASSERT_TRUE(connection);
  server().pause();
  ASSERT_TRUE(connection->send({"INCR", "counter"}));
  ASSERT_TRUE(wait_until([this] { return server_has_unread_request(server().endpoint().port); }, 5s));
  server().crash();  // unread data at close: the kernel resets the connection
  auto reply = connection->read_until(std::chrono::steady_clock::now() + 5s);
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, ErrorKind::io) << reply.error().message;
  EXPECT_TRUE(reply.error().request_sent);
  EXPECT_TRUE(reply.error().outcome_unknown()) << "the server might have run it before dying";
}

TEST_F(PlumbingTest, ResetDuringACommandIsOutcomeUnknown) {
  auto connection = Connection::connect(server().connection_options());
  ASSERT_TRUE(connection);
  server().pause();
  std::optional<Result<redis::Reply>> reply;
  std::thread client([&] { reply.emplace(connection->command({"INCR", "counter"})); });
  const bool reached = wait_until([this] { return server_has_unread_request(server().endpoint().port); }, 5s);
  server().crash();
  client.join();
  ASSERT_TRUE(reached);
  ASSERT_TRUE(reply && !*reply);
  EXPECT_EQ(reply->error().kind, ErrorKind::io) << reply->error().message;
  EXPECT_TRUE(reply->error().outcome_unknown());
}

TEST_F(PlumbingTest, CloseDuringACommandIsOutcomeUnknown) {
  auto connection = Connection::connect(server().connection_options());
  ASSERT_TRUE(connection);
  std::optional<Result<redis::Reply>> reply;
  std::thread client([&] { reply.emplace(connection->command({"BLPOP", "never", "0"})); });
  const bool blocked = wait_until([this] {
    return run({"INFO", "clients"}).text().find("blocked_clients:1") != std::string_view::npos;
  }, 5s);
  run({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  client.join();
  ASSERT_TRUE(blocked);
  ASSERT_TRUE(reply && !*reply);
  EXPECT_TRUE(reply->error().outcome_unknown()) << reply->error().message;
}

// Nothing left the client: not applied, whatever the kind says.
TEST_F(PlumbingTest, FailuresBeforeTheRequestWasSentAreNotOutcomeUnknown) {
  ConnectionOptions unreachable;
  unreachable.endpoint = {"127.0.0.1", 1};
  auto refused = Connection::connect(unreachable);
  ASSERT_FALSE(refused);
  EXPECT_FALSE(refused.error().outcome_unknown());

  ConnectionOptions slow = server().connection_options();
  slow.command_timeout = 200ms;
  auto connection = Connection::connect(slow);
  ASSERT_TRUE(connection);
  server().pause();
  auto lost = connection->command({"INCR", "counter"});
  server().resume();
  ASSERT_FALSE(lost);
  EXPECT_TRUE(lost.error().outcome_unknown()) << "sent, then timed out: maybe applied";
  auto fail_fast = connection->command({"INCR", "counter"});
  ASSERT_FALSE(fail_fast);
  EXPECT_FALSE(fail_fast.error().outcome_unknown()) << "a broken connection sends nothing: not applied";
}

TEST_F(PlumbingTest, ReadUntilHonoursItsDeadline) {
  auto connection = Connection::connect(server().connection_options());
  ASSERT_TRUE(connection);
  server().pause();
  ASSERT_TRUE(connection->send({"PING"}));
  const auto start = std::chrono::steady_clock::now();
  auto reply = connection->read_until(start + 100ms);
  const auto took = std::chrono::steady_clock::now() - start;
  server().resume();
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, ErrorKind::timeout);
  EXPECT_GE(took, 90ms);
  EXPECT_LT(took, 1s);
}

TEST_F(PlumbingTest, LinkReconnectsAfterServerRestart) {
  redis::Link link(server().connection_options());
  ASSERT_TRUE(link.command({"SET", "k", "v"}));
  server().crash();
  EXPECT_FALSE(link.command({"GET", "k"}));
  ASSERT_TRUE(server().restart());
  auto reply = link.command({"GET", "k"});
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_TRUE(reply->is_nil()) << "restart without persistence must come back empty";
}

TEST_F(PlumbingTest, AuthWithPasswordAndWrongPassword) {
  harness::ServerOptions options;
  options.password = "s3cret";
  auto secured = harness::RedisServer::start(options);
  ASSERT_TRUE(secured) << secured.error().message;
  auto good = Connection::connect((*secured)->connection_options());
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_TRUE(good->command({"PING"})->is_status("PONG"));

  auto wrong_options = (*secured)->connection_options();
  wrong_options.password = "wrong";
  auto wrong = Connection::connect(wrong_options);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().kind, ErrorKind::auth);

  auto user_options = (*secured)->connection_options();
  user_options.user = "default";
  EXPECT_TRUE(Connection::connect(user_options)) << "AUTH user password (ACL form)";
}

TEST_F(PlumbingTest, ScriptFallsBackOnNoscript) {
  redis::Script script("return redis.call('INCR', KEYS[1]) + tonumber(ARGV[1])");
  auto first = script.run(admin(), {"s"}, {"10"});
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->integer(), 11);
  run({"SCRIPT", "FLUSH"});
  auto second = script.run(admin(), {"s"}, {"10"});
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->integer(), 12);
}

// A script whose SCRIPT LOAD reply was lost never ran: the caller (an acquire)
// must see a plain error, not "maybe applied".
TEST_F(PlumbingTest, ALostScriptLoadReplyIsNotAnUnknownOutcome) {
  auto options = server().connection_options();
  options.command_timeout = 100ms;
  auto connection = Connection::connect(options);
  ASSERT_TRUE(connection) << connection.error().message;
  redis::Script script("return redis.call('INCR', KEYS[1])");
  server().pause();
  auto reply = script.run(*connection, {"s"}, {});
  server().resume();
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, ErrorKind::timeout) << reply.error().message;
  EXPECT_FALSE(reply.error().outcome_unknown()) << "only SCRIPT LOAD was sent; the script never was";
}

TEST_F(PlumbingTest, ScriptErrorIsAValue) {
  redis::Script script("return redis.call('INCR', KEYS[1])");
  run({"SET", "s", "not a number"});
  auto reply = script.run(admin(), {"s"}, {});
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, ErrorKind::reply);
}

TEST(Endpoint, Parse) {
  EXPECT_EQ(redis::Endpoint::parse("127.0.0.1:6380")->port, 6380);
  EXPECT_EQ(redis::Endpoint::parse("localhost:1")->host, "localhost");
  EXPECT_EQ(redis::Endpoint::parse("6390")->port, 6390);
  EXPECT_FALSE(redis::Endpoint::parse("host:"));
  EXPECT_FALSE(redis::Endpoint::parse("host:99999"));
  EXPECT_FALSE(redis::Endpoint::parse("host:12ab"));
}

TEST(Launcher, StoppingLeavesNoProcessAndNoDir) {
  auto server = harness::RedisServer::start();
  ASSERT_TRUE(server) << server.error().message;
  const pid_t pid = (*server)->pid();
  const std::string dir = (*server)->dir();
  ASSERT_GT(pid, 0);
  server->reset();
  EXPECT_EQ(::kill(pid, 0), -1) << "redis-server " << pid << " still running";
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// A parent killed with SIGKILL cannot clean up; the kernel must stop its servers.
TEST(Launcher, ServerDiesWithItsParentEvenOnSigkill) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    ::close(pipe_fds[0]);
    auto server = harness::RedisServer::start();
    const pid_t server_pid = server ? (*server)->pid() : -1;
    (void)!::write(pipe_fds[1], &server_pid, sizeof server_pid);
    ::pause();
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  pid_t server_pid = -1;
  ASSERT_EQ(::read(pipe_fds[0], &server_pid, sizeof server_pid), static_cast<ssize_t>(sizeof server_pid));
  ::close(pipe_fds[0]);
  ASSERT_GT(server_pid, 0);
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    // The server was the killed parent's child; once reparented and dead, kill(pid, 0) fails.
    gone = ::kill(server_pid, 0) == -1;
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "orphaned redis-server " << server_pid;
  if (!gone) ::kill(server_pid, SIGKILL);
}

// Dirs of launchers that were SIGKILLed (no destructor ran) are swept by the next
// process that starts a server.
TEST(Launcher, TempDirOfADeadOwnerIsRemovedByTheNextLauncher) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // `child` is now a pid with no process
  const auto stale = std::filesystem::temp_directory_path() / ("locklab-redis-" + std::to_string(child) + "-test");
  std::filesystem::create_directories(stale / "inner");
  // The sweep runs once per process, at its first start: run it in a fresh child.
  const pid_t launcher = ::fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) ::_exit(harness::RedisServer::start() ? 0 : 1);
  int status = 0;
  ::waitpid(launcher, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const bool still_there = std::filesystem::exists(stale);
  std::filesystem::remove_all(stale);
  EXPECT_FALSE(still_there) << stale;
}

TEST(Launcher, MasterWithReplicaReplicates) {
  auto servers = harness::start_master_with_replica();
  ASSERT_TRUE(servers) << servers.error().message;
  auto master = Connection::connect((*servers)[0]->connection_options());
  auto replica = Connection::connect((*servers)[1]->connection_options());
  ASSERT_TRUE(master && replica);
  master->command({"SET", "k", "v"});
  EXPECT_EQ(master->command({"WAIT", "1", "2000"})->integer(), 1);
  EXPECT_EQ(replica->command({"GET", "k"})->string(), "v");
}

TEST(Launcher, StartsIndependentMasters) {
  auto servers = harness::start_masters(3);
  ASSERT_TRUE(servers) << servers.error().message;
  ASSERT_EQ(servers->size(), 3u);
  EXPECT_NE((*servers)[0]->endpoint().port, (*servers)[1]->endpoint().port);
  EXPECT_EQ(harness::server_version((*servers)[2]->connection_options()).substr(0, 2), "7.");
}

}  // namespace
}  // namespace locklab::testing
