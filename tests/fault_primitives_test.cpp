// The fault primitives on real redis-server processes: a failover that loses
// an acknowledged write (replication held in the proxy), a node's wall clock
// jumped by the clock shim, and a SIGSTOP that is always undone.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "servers/clock_jump.h"
#include "servers/proxied_replication.h"
#include "servers/redis_server.h"
#include "support/conditions.h"
#include "support/process_control.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using harness::wait_until;
using Clock = std::chrono::steady_clock;

redis::Connection connect(const redis::ConnectionOptions& options) {
  auto connection = redis::Connection::connect(options);
  EXPECT_TRUE(connection) << connection.error().message;
  return std::move(connection).value();
}

// ---- failover through the proxy ----------------------------------------------

class FailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = harness::ProxiedReplication::start();
    ASSERT_TRUE(started) << started.error().message;
    pair_ = std::move(started).value();
  }
  std::unique_ptr<harness::ProxiedReplication> pair_;
};

TEST_F(FailoverTest, WriteHeldInTheProxyIsLostWhenTheReplicaIsPromoted) {
  auto master = connect(pair_->master().connection_options());
  pair_->hold_replication();
  ASSERT_TRUE(master.command({"SET", "k", "acknowledged"})->is_status("OK"));
  ASSERT_TRUE(wait_until([&] { return pair_->held_bytes() > 0; }, 5s)) << "the SET is on its way to the replica";

  auto promoted = pair_->fail_over();
  ASSERT_TRUE(promoted) << promoted.error().message;
  auto new_master = connect(*promoted);
  EXPECT_TRUE(new_master.command({"GET", "k"})->is_nil()) << "the promoted replica never got it";
  EXPECT_TRUE(new_master.command({"SET", "k", "second"})->is_status("OK")) << "it is a writable master";
  EXPECT_FALSE(pair_->master().running());
}

TEST_F(FailoverTest, WaitCountsNoReplicaWhileReplicationIsHeld) {
  auto master = connect(pair_->master().connection_options());
  pair_->hold_replication();
  ASSERT_TRUE(master.command({"SET", "k", "v"})->is_status("OK"));
  auto acknowledged = master.command({"WAIT", "1", "100"});
  ASSERT_TRUE(acknowledged) << acknowledged.error().message;
  EXPECT_EQ(acknowledged->integer(), 0) << "the WAIT guard sees the write unreplicated";

  pair_->resume_replication();
  acknowledged = master.command({"WAIT", "1", "5000"});
  ASSERT_TRUE(acknowledged) << acknowledged.error().message;
  EXPECT_EQ(acknowledged->integer(), 1) << "released, the held bytes reach the replica";
}

TEST_F(FailoverTest, ReplicatedWriteSurvivesTheFailover) {
  auto master = connect(pair_->master().connection_options());
  ASSERT_TRUE(master.command({"SET", "k", "replicated"})->is_status("OK"));
  ASSERT_TRUE(pair_->wait_in_sync());

  auto promoted = pair_->fail_over();
  ASSERT_TRUE(promoted) << promoted.error().message;
  auto new_master = connect(*promoted);
  EXPECT_EQ(new_master.command({"GET", "k"})->string(), "replicated");
}

// ---- clock jump on one node --------------------------------------------------

long long server_time_seconds(redis::Connection& connection) {
  auto time = connection.command({"TIME"});
  if (!time || !time->is_array() || time->size() != 2) return -1;
  return std::stoll(std::string(time->element(0).text()));
}

long long real_time_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(ClockJumpTest, JumpForwardExpiresAKeyAndJumpBackRestoresTime) {
  harness::ServerOptions options;
  options.clock_shim = true;
  auto started = harness::RedisServer::start(options);
  ASSERT_TRUE(started) << started.error().message;
  auto& server = *started.value();
  auto client = connect(server.connection_options());

  const long long before = server_time_seconds(client);
  EXPECT_LE(std::llabs(before - real_time_seconds()), 2) << "offset 0: the node starts on real time";
  ASSERT_TRUE(client.command({"SET", "k", "v", "PX", "20000"})->is_status("OK"));
  ASSERT_GT(client.command({"PTTL", "k"})->integer(), 15'000);

  ASSERT_TRUE(harness::jump_clock(server, 30s));
  EXPECT_TRUE(wait_until([&] { return server_time_seconds(client) - real_time_seconds() >= 29; }, 5s))
      << "TIME moved about +30 s";
  EXPECT_LE(server_time_seconds(client) - real_time_seconds(), 31);
  EXPECT_TRUE(wait_until([&] { return client.command({"PTTL", "k"})->integer() == -2; }, 5s))
      << "20 s left, 30 s jumped: the key is gone";
  EXPECT_TRUE(client.command({"GET", "k"})->is_nil());

  ASSERT_TRUE(harness::jump_clock(server, 0ms));
  EXPECT_TRUE(wait_until([&] { return std::llabs(server_time_seconds(client) - real_time_seconds()) <= 1; }, 5s))
      << "offset 0: TIME is back";
}

// A port is free only when probed: between a node's crash and its restart on
// the same port another process may take it. The restart must then fail, not
// adopt that process because it answers PING (INFO's process_id is not ours):
// matrix cells running side by side take their ports from the same free range,
// and a node-restart could have "restarted" onto another cell's server. Here
// the other process is a redis-server this test starts on the crashed node's
// port, and ends by its PID.
TEST(RedisServerRestartTest, APortTakenMeanwhileFailsTheRestartInsteadOfAdoptingItsServer) {
  auto started = harness::RedisServer::start();
  ASSERT_TRUE(started) << started.error().message;
  auto& server = *started.value();
  const std::string port = std::to_string(server.endpoint().port);
  server.crash();
  auto binary = harness::find_redis_server();
  ASSERT_TRUE(binary) << binary.error().message;
  const pid_t other = ::fork();
  ASSERT_GE(other, 0);
  if (other == 0) {
    const int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(devnull, STDERR_FILENO);
    ::execl(binary->c_str(), binary->c_str(), "--port", port.c_str(), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--daemonize", "no", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  auto stranger = [&] {
    auto link = redis::Connection::connect(server.connection_options());
    return link && link->command({"PING"});
  };
  const bool up = wait_until(stranger, 5s);
  const auto restarted = up ? server.restart() : Status{Done{}};
  ::kill(other, SIGKILL);
  ::waitpid(other, nullptr, 0);
  ASSERT_TRUE(up) << "the other redis-server did not come up on port " << port;
  EXPECT_FALSE(restarted) << "the restart adopted another process's server on port " << port;
}

TEST(ClockJumpTest, AServerNotUnderTheShimCannotBeJumped) {
  auto started = harness::RedisServer::start();
  ASSERT_TRUE(started) << started.error().message;
  auto jumped = harness::jump_clock(*started.value(), 30s);
  ASSERT_FALSE(jumped);
  EXPECT_EQ(jumped.error().kind, ErrorKind::usage);
}

// The shim itself, loaded privately (RTLD_LOCAL: this process's clock stays
// real): wall clocks shift by the file's offset, monotonic clocks do not.
TEST(ClockShimTest, ShiftsWallClocksOnlyAndFollowsTheFile) {
  const auto file = std::filesystem::temp_directory_path() / ("locklab-clock-shim-test-" + std::to_string(::getpid()));
  ASSERT_TRUE(harness::write_clock_offset(file.string(), 3'600'000ms));
  ::setenv(LOCKLAB_CLOCK_OFFSET_ENV, file.c_str(), 1);
  void* shim = ::dlopen(LOCKLAB_CLOCK_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(shim, nullptr) << ::dlerror();
  using ClockGettime = int (*)(clockid_t, timespec*);
  auto shim_clock_gettime = reinterpret_cast<ClockGettime>(::dlsym(shim, "clock_gettime"));
  auto shim_time = reinterpret_cast<time_t (*)(time_t*)>(::dlsym(shim, "time"));
  ASSERT_NE(shim_clock_gettime, nullptr);
  ASSERT_NE(shim_time, nullptr);

  const auto seconds = [](clockid_t clock, ClockGettime read) {
    timespec now{};
    read(clock, &now);
    return static_cast<long long>(now.tv_sec);
  };
  EXPECT_NEAR(seconds(CLOCK_REALTIME, shim_clock_gettime) - seconds(CLOCK_REALTIME, ::clock_gettime), 3600, 1);
  EXPECT_NEAR(seconds(CLOCK_REALTIME_COARSE, shim_clock_gettime) - seconds(CLOCK_REALTIME_COARSE, ::clock_gettime),
              3600, 1);
  EXPECT_NEAR(static_cast<long long>(shim_time(nullptr)) - real_time_seconds(), 3600, 1);
  EXPECT_NEAR(seconds(CLOCK_MONOTONIC, shim_clock_gettime), seconds(CLOCK_MONOTONIC, ::clock_gettime), 1);
  EXPECT_NEAR(seconds(CLOCK_BOOTTIME, shim_clock_gettime), seconds(CLOCK_BOOTTIME, ::clock_gettime), 1);

  ASSERT_TRUE(harness::write_clock_offset(file.string(), -7'200'000ms));
  EXPECT_TRUE(wait_until(
      [&] {
        return std::llabs(seconds(CLOCK_REALTIME, shim_clock_gettime) - seconds(CLOCK_REALTIME, ::clock_gettime) +
                          7200) <= 1;
      },
      2s, 1ms))
      << "a rewritten file is picked up (backward jumps too)";
  ::dlclose(shim);
  std::filesystem::remove(file);
}

// ---- pause / resume ------------------------------------------------------------

TEST(PausedProcessTest, APausedServerTimesOutAndAnswersOnceResumed) {
  auto started = harness::RedisServer::start();
  ASSERT_TRUE(started) << started.error().message;
  auto& server = *started.value();
  redis::ConnectionOptions impatient = server.connection_options();
  impatient.command_timeout = 300ms;
  {
    auto paused = harness::PausedProcess::pause(server.pid());
    ASSERT_TRUE(paused) << paused.error().message;
    EXPECT_TRUE(harness::process_stopped(server.pid()));
    auto client = connect(impatient);
    auto pong = client.command({"PING"});
    ASSERT_FALSE(pong);
    EXPECT_EQ(pong.error().kind, ErrorKind::timeout);
  }  // the guard resumes it
  EXPECT_TRUE(wait_until([&] { return !harness::process_stopped(server.pid()); }, 2s));
  auto client = connect(impatient);
  auto pong = client.command({"PING"});
  ASSERT_TRUE(pong) << pong.error().message;
  EXPECT_TRUE(pong->is_status("PONG"));
}

TEST(PausedProcessTest, PausingANonexistentProcessIsAnError) {
  auto paused = harness::PausedProcess::pause(-1);
  ASSERT_FALSE(paused);
  EXPECT_EQ(paused.error().kind, ErrorKind::usage);
}

}  // namespace
}  // namespace locklab::testing
