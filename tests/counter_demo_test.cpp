// counter_demo (scenarios/), run as the built binary: seed 004 §11's experiment.
//   --serve + the article's own `ab -n100 -c50 .../test`: no lock loses updates on
//   every one of 5 back-to-back runs; lua-safe-delete gives exactly 101; SIGTERM and
//   SIGINT stop the front, its instances and its redis-server (no orphans).
//   The in-process table for a subset of rows reaches the lesson's verdict (exit 0).
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "support/conditions.h"

namespace {

using namespace std::chrono_literals;
using locklab::harness::wait_until;

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs a shell command, bounded by coreutils' `timeout`.
CommandResult run_command(const std::string& command, int seconds = 120) {
  CommandResult result;
  const std::string bounded = "timeout -k 5 " + std::to_string(seconds) + " " + command + " 2>&1";
  FILE* pipe = ::popen(bounded.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string demo_binary() { return COUNTER_DEMO_BINARY; }

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

std::vector<pid_t> parse_pids(const std::string& list) {
  std::vector<pid_t> pids;
  const std::regex number(R"(\d+)");
  for (std::sregex_iterator it(list.begin(), list.end(), number), end; it != end; ++it)
    pids.push_back(static_cast<pid_t>(std::stoi(it->str())));
  return pids;
}

// `counter_demo --serve 0 ...` in the background: its port and the pids it announced.
class ServedDemo {
 public:
  explicit ServedDemo(const std::vector<std::string>& flags) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a crashed test leaves no demo behind
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      std::vector<std::string> args{demo_binary(), "--serve", "0"};
      args.insert(args.end(), flags.begin(), flags.end());
      std::vector<char*> argv;
      for (auto& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    output_fd_ = fds[0];
    read_announcement(20s);
  }

  ~ServedDemo() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (output_fd_ >= 0) ::close(output_fd_);
  }

  int port() const { return port_; }
  const std::vector<pid_t>& children() const { return children_; }
  const std::string& output() const { return output_; }

  std::optional<std::string> get(const std::string& path) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(30s);
    auto answer = client.Get(path.c_str());
    if (!answer || answer->status != 200) return std::nullopt;
    return answer->body;
  }

  // Sends `signo`; the exit code if it exits within `limit`, else nullopt.
  std::optional<int> stop(int signo, std::chrono::milliseconds limit) {
    ::kill(pid_, signo);
    int status = 0;
    const bool exited = wait_until([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, limit, 20ms);
    if (!exited) return std::nullopt;
    pid_ = -1;
    return WIFEXITED(status) ? std::optional<int>(WEXITSTATUS(status)) : std::optional<int>(-1);
  }

 private:
  // Reads stdout until the "pids:" line (printed after "listening on").
  void read_announcement(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+)/)");
    const std::regex pids(R"(pids: instances ([\d,]+); redis ([\d,-]+)\n)");
    std::smatch match;
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::regex_search(output_, match, pids)) {
        children_ = parse_pids(match[1].str() + "," + match[2].str());
        if (std::regex_search(output_, match, listening)) port_ = std::stoi(match[1].str());
        return;
      }
      pollfd watched{output_fd_, POLLIN, 0};
      if (::poll(&watched, 1, 100) != 1) continue;
      char buffer[1024];
      const ssize_t n = ::read(output_fd_, buffer, sizeof buffer);
      if (n <= 0) return;  // the demo exited
      output_.append(buffer, static_cast<std::size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int output_fd_ = -1;
  int port_ = -1;
  std::vector<pid_t> children_;
  std::string output_;
};

// The article's command, then GET /counter.
long long ab_then_counter(ServedDemo& demo) {
  const auto ab = run_command("ab -n100 -c50 http://127.0.0.1:" + std::to_string(demo.port()) + "/test", 60);
  EXPECT_EQ(ab.exit_code, 0) << ab.output;
  EXPECT_NE(ab.output.find("Complete requests:      100"), std::string::npos) << ab.output;
  EXPECT_NE(ab.output.find("Failed requests:        0"), std::string::npos) << ab.output;
  EXPECT_EQ(ab.output.find("Non-2xx responses"), std::string::npos) << ab.output;
  const auto counter = demo.get("/counter");
  EXPECT_TRUE(counter);
  return counter ? std::stoll(*counter) : -1;
}

void expect_ab_installed() {
  ASSERT_EQ(run_command("ab -V", 10).exit_code, 0) << "ab not found: scripts/setup installs apache2-utils";
}

void expect_stops_without_orphans(ServedDemo& demo, int signo) {
  const std::vector<pid_t> children = demo.children();
  ASSERT_GE(children.size(), 4u) << demo.output();  // 3 instances + redis-server
  EXPECT_EQ(demo.stop(signo, 15s), std::optional<int>(0));
  for (pid_t child : children) EXPECT_TRUE(wait_until([&] { return process_gone(child); }, 5s)) << "pid " << child;
}

TEST(CounterDemoServe, NoLockThroughTheRoundRobinFrontLosesUpdatesFiveRunsInARow) {
  expect_ab_installed();
  ServedDemo demo({"--instances", "3", "--lock", "no-lock"});
  ASSERT_GT(demo.port(), 0) << demo.output();
  for (int run = 1; run <= 5; ++run) {
    ASSERT_EQ(demo.get("/reset"), std::optional<std::string>("1\n")) << "run " << run;
    const long long counter = ab_then_counter(demo);
    EXPECT_GE(counter, 2) << "run " << run;
    EXPECT_LT(counter, 101) << "run " << run << ": no lost update with no lock";
  }
  expect_stops_without_orphans(demo, SIGTERM);
}

TEST(CounterDemoServe, LuaSafeDeleteThroughTheRoundRobinFrontGivesExactly101) {
  expect_ab_installed();
  ServedDemo demo({"--instances", "3", "--lock", "lua-safe-delete"});
  ASSERT_GT(demo.port(), 0) << demo.output();
  EXPECT_EQ(demo.get("/counter"), std::optional<std::string>("1\n"));  // set to 1 at start
  EXPECT_EQ(ab_then_counter(demo), 101);
  expect_stops_without_orphans(demo, SIGINT);
}

// One instance is announced in the singular (issue 28: "1 instances"), and the
// local lock in it loses nothing over HTTP either.
TEST(CounterDemoServe, OneInstanceIsAnnouncedInTheSingularAndTheLocalLockGives101) {
  expect_ab_installed();
  ServedDemo demo({"--instances", "1", "--lock", "local-mutex"});
  ASSERT_GT(demo.port(), 0) << demo.output();
  EXPECT_NE(demo.output().find("(lock local-mutex, 1 instance on port "), std::string::npos) << demo.output();
  EXPECT_EQ(ab_then_counter(demo), 101);
  EXPECT_EQ(demo.stop(SIGTERM, 15s), std::optional<int>(0));
}

TEST(CounterDemoTable, LocalMutexLosesUpdatesOnlyAcrossInstances) {
  const auto run = run_command(demo_binary() + " --lock local-mutex");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(std::regex_search(run.output, std::regex(R"(local mutex, 1 instance +101 +101 +100/100 .*as the lesson says)")))
      << run.output;
  EXPECT_TRUE(std::regex_search(run.output, std::regex(R"(local mutex, 3 instances +101 +\d+ +100/100 .*loses updates: as the lesson says)")))
      << run.output;
}

TEST(CounterDemoTable, NoLockLosesAndRedisGenerationsGive101) {
  for (const std::string lock : {"no-lock", "setnx", "lua-safe-delete", "redlock"}) {
    const auto run = run_command(demo_binary() + " --lock " + lock + " --nodes 3");
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("verdict: every row as the lesson says"), std::string::npos) << run.output;
    if (lock != "no-lock") {
      EXPECT_TRUE(std::regex_search(run.output, std::regex(R"( +101 +101 +100/100 )"))) << run.output;
    }
  }
}

TEST(CounterDemoCli, BadFlagsExitTwoWithOneLine) {
  for (const std::string flags : {"--bogus", "--lock nope", "--requests 0", "--instances 2", "--redis not-an-address:x"}) {
    const auto run = run_command(demo_binary() + " " + flags, 30);
    EXPECT_EQ(run.exit_code, 2) << flags << ": " << run.output;
    EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << flags << ": " << run.output;
  }
}

}  // namespace
