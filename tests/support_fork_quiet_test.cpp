// support/fork_quiet.h: a fork() waits for every registered mutex, and the
// child gets each of them free (the copy of a lock held at the fork would be
// held in the child for good: a client process hung in the sanitizer preset).
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "servers/tcp_proxy.h"
#include "support/conditions.h"
#include "support/fork_quiet.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using harness::QuietAtFork;
using Clock = std::chrono::steady_clock;

// fork(); the child exits 0 when it can take `mutex` at once, 1 when it cannot.
// Returns the child's exit status.
int fork_and_try(std::mutex& mutex) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const bool free = mutex.try_lock();
    ::_exit(free ? 0 : 1);
  }
  EXPECT_GT(pid, 0);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A thread of this process as /proc tells it: 'R' running, 'S' asleep (a
// futex, a wait), ... ('?' when it cannot be read).
char thread_state(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return '?';
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
}

// A thread holds the mutex until `let_go` is set or 10 s have passed; returns when it has it.
struct Holder {
  std::mutex& mutex;
  std::atomic<bool> holding{false};
  std::atomic<bool> let_go{false};
  std::atomic<bool> gave_up_waiting{false};  // let go after 10 s, not because it was told
  Clock::time_point released_at{};
  std::thread thread;

  explicit Holder(std::mutex& m) : mutex(m) {
    thread = std::thread([this] {
      const std::lock_guard lock(mutex);
      holding = true;
      gave_up_waiting = !harness::wait_until([this] { return let_go.load(); }, 10s, 1ms);
      released_at = Clock::now();
    });
    EXPECT_TRUE(harness::wait_until([this] { return holding.load(); }, 5s, 1ms));
  }
  ~Holder() { finish(); }
  void finish() {
    if (thread.joinable()) thread.join();
  }
};

TEST(QuietAtFork, AForkWaitsUntilARegisteredMutexIsFreeAndTheChildGetsItFree) {
  std::mutex mutex;
  const QuietAtFork quiet(mutex);
  Holder holder(mutex);
  // Let go once this thread sleeps: in the fork, waiting for the mutex (or,
  // were the fork not to wait, in waitpid() after it: the child's try then
  // already failed).
  const pid_t forking = ::gettid();
  std::thread release_soon([&] {
    EXPECT_TRUE(harness::wait_until([&] { return thread_state(forking) == 'S'; }, 10s, 1ms));
    holder.let_go = true;
  });
  const int child = fork_and_try(mutex);
  const auto forked_at = Clock::now();
  release_soon.join();
  holder.finish();
  EXPECT_EQ(child, 0) << "the child could not take the mutex: its copy was left held";
  EXPECT_FALSE(holder.gave_up_waiting);
  EXPECT_GE(forked_at, holder.released_at) << "the fork went ahead while another thread held the mutex";
}

TEST(QuietAtFork, AMutexNoLongerRegisteredDoesNotHoldForks) {
  std::mutex mutex;
  { const QuietAtFork gone(mutex); }
  Holder holder(mutex);
  const int child = fork_and_try(mutex);  // returns while the holder still holds it
  holder.let_go = true;
  holder.finish();
  EXPECT_EQ(child, 1) << "the child's copy of a mutex held at the fork is held";
  EXPECT_FALSE(holder.gave_up_waiting) << "the fork waited for a mutex that was no longer registered";
}

// The proxies are why this exists: each one's poll thread is quiet at a fork
// for as long as the proxy lives.
TEST(QuietAtFork, EveryTcpProxyRegistersItsPollThreadsMutexForItsLifetime) {
  const std::size_t before = QuietAtFork::registered();
  {
    auto proxy = harness::TcpProxy::start(redis::Endpoint{"127.0.0.1", 1});
    ASSERT_TRUE(proxy) << proxy.error().message;
    EXPECT_EQ(QuietAtFork::registered(), before + 1);
  }
  EXPECT_EQ(QuietAtFork::registered(), before);
}

}  // namespace
}  // namespace locklab::testing
