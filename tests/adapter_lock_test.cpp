// AdapterLock (harness/workload/adapter_lock.h, docs/adapters.md): the adapter
// protocol client against redis-py's adapter (harness/adapters/python/redis_py.py)
// on a real redis-server, and against the deliberately broken adapters of
// tests/adapters/: each gives one error line naming the adapter, within a
// bound, and leaves no process behind.
//
// The redis-py cases need Debian's python3-redis (scripts/setup installs it)
// and skip without it; the broken adapters need only /usr/bin/python3.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fixtures/redis_fixture.h"
#include "support/conditions.h"
#include "support/process_control.h"
#include "workload/adapter_lock.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using harness::AdapterLock;
using harness::AdapterTimeouts;

const std::string kRedisPy = LOCKLAB_PEERS_DIR "/python/redis_py.py";
const std::string kBroken = LOCKLAB_TEST_ADAPTERS_DIR "/";
// Short bounds for the broken adapters, so each case ends in well under a second.
constexpr AdapterTimeouts kShort{5'000ms, 300ms, 200ms};

bool python_redis_installed() { return std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") == 0; }

// Our children other than redis-server (zombies included): the adapters still around.
int adapter_children() {
  int count = 0;
  DIR* proc = ::opendir("/proc");
  while (dirent* entry = proc ? ::readdir(proc) : nullptr) {
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string pid, comm, state;
    long ppid = 0;
    if (stat >> pid >> comm >> state >> ppid && ppid == ::getpid() && comm != "(redis-server)") ++count;
  }
  if (proc) ::closedir(proc);
  return count;
}

bool gone(pid_t pid) { return ::kill(pid, 0) == -1; }

// Gone, or a zombie waiting for a reaper that is not us (a process another one orphaned).
bool dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string id, comm, state;
  return !(stat >> id >> comm >> state) || state == "Z";
}
bool one_line(const std::string& text) { return !text.empty() && text.find('\n') == std::string::npos; }

class AdapterLockTest : public RedisTest {
 protected:
  std::unique_ptr<AdapterLock> redis_py(int client) {
    auto made = AdapterLock::create({kRedisPy}, config(10'000ms, "locklab:adapter"), client);
    EXPECT_TRUE(made) << made.error().message;
    return made ? std::move(made).value() : nullptr;
  }
  std::unique_ptr<AdapterLock> broken(const std::vector<std::string>& argv) {
    auto made = AdapterLock::create(argv, config(), 1, kShort);
    EXPECT_TRUE(made) << made.error().message;
    return made ? std::move(made).value() : nullptr;
  }
  // create() must fail with one line naming the adapter and containing `what`.
  void expect_create_fails(const std::vector<std::string>& argv, const std::string& what) {
    const auto began = std::chrono::steady_clock::now();
    auto made = AdapterLock::create(argv, config(), 1, kShort);
    ASSERT_FALSE(made);
    const std::string& line = made.error().message;
    EXPECT_TRUE(one_line(line)) << line;
    EXPECT_NE(line.find(argv[0]), std::string::npos) << line;
    EXPECT_NE(line.find(what), std::string::npos) << line;
    EXPECT_LT(std::chrono::steady_clock::now() - began, 3s) << line;
    EXPECT_EQ(adapter_children(), 0);
  }
};

TEST_F(AdapterLockTest, RedisPyAcquiresTimesOutReleases) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  auto first = redis_py(1);
  auto second = redis_py(2);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->identity().library, "redis-py");
  EXPECT_FALSE(first->identity().version.empty());
  EXPECT_EQ(first->identity().language, "python");
  EXPECT_FALSE(first->identity().capabilities.at("auto_extends"));
  EXPECT_EQ(first->try_acquire(0ms), Acquire::acquired) << first->last_error();
  EXPECT_EQ(second->try_acquire(100ms), Acquire::timed_out) << second->last_error();
  EXPECT_EQ(first->release(), Release::released) << first->last_error();
  // redis-py forgets its token on release; a second release raises LockError
  // ("Cannot release an unlocked lock") without asking Redis: already_expired.
  EXPECT_EQ(first->release(), Release::already_expired) << first->last_error();
  EXPECT_EQ(second->try_acquire(0ms), Acquire::acquired) << second->last_error();
  EXPECT_EQ(second->release(), Release::released) << second->last_error();
  EXPECT_EQ(first->leases_lost(), 0u);
}

TEST_F(AdapterLockTest, RedisPyReleaseOfAnotherHoldIsNotOwner) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  auto lock = redis_py(1);
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired) << lock->last_error();
  run({"SET", "locklab:adapter", "someone-else"});  // our lease ran out and another client took the key
  EXPECT_EQ(lock->release(), Release::not_owner) << lock->last_error();
  EXPECT_EQ(run({"GET", "locklab:adapter"}).string().value_or(""), "someone-else");
}

// The acquire request carries the run's retry interval (LockConfig::retry_interval) as retry_ms,
// and nothing when the config has none (the adapter then keeps its own).
TEST_F(AdapterLockTest, TheAcquireCarriesTheRetryInterval) {
  auto with_retry = config();
  with_retry.retry_interval = 7ms;
  auto told = AdapterLock::create({kBroken + "retry_echo.py"}, with_retry, 1, kShort);
  ASSERT_TRUE(told) << told.error().message;
  EXPECT_EQ((*told)->try_acquire(0ms), Acquire::error);
  EXPECT_NE((*told)->last_error().find("retry_ms=7"), std::string::npos) << (*told)->last_error();

  auto without = config();
  without.retry_interval.reset();  // the fixture's config has one
  auto untold = AdapterLock::create({kBroken + "retry_echo.py"}, without, 1, kShort);
  ASSERT_TRUE(untold) << untold.error().message;
  EXPECT_EQ((*untold)->try_acquire(0ms), Acquire::error);
  EXPECT_NE((*untold)->last_error().find("retry_ms=absent"), std::string::npos) << (*untold)->last_error();
}

// A row whose token is judged at the resource (carry_tokens(), catalog `token_at_resource`): the
// token of each `acquired` while held, none after the release; without carry_tokens() none at all;
// an `acquired` without a token then breaks the adapter (acquire unknown, one line).
TEST_F(AdapterLockTest, CarriedTokensAreKeptWhileHeld) {
  auto carried = AdapterLock::create({kBroken + "token_giver.py"}, config(), 1, kShort);
  ASSERT_TRUE(carried) << carried.error().message;
  (*carried)->carry_tokens();
  ASSERT_EQ((*carried)->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ((*carried)->fencing_token(), 1u);
  EXPECT_EQ((*carried)->release(), Release::released);
  EXPECT_FALSE((*carried)->fencing_token());
  ASSERT_EQ((*carried)->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ((*carried)->fencing_token(), 2u);

  auto ignored = AdapterLock::create({kBroken + "token_giver.py"}, config(), 1, kShort);
  ASSERT_TRUE(ignored) << ignored.error().message;
  ASSERT_EQ((*ignored)->try_acquire(0ms), Acquire::acquired);
  EXPECT_FALSE((*ignored)->fencing_token()) << "a row without token_at_resource: its token is not judged";

  auto tokenless = AdapterLock::create({kBroken + "token_giver.py", "--no-token"}, config(), 1, kShort);
  ASSERT_TRUE(tokenless) << tokenless.error().message;
  (*tokenless)->carry_tokens();
  EXPECT_EQ((*tokenless)->try_acquire(0ms), Acquire::unknown);
  EXPECT_FALSE((*tokenless)->fencing_token());
  EXPECT_NE((*tokenless)->broken().find("without a fencing_token"), std::string::npos) << (*tokenless)->broken();
}

TEST_F(AdapterLockTest, NoopRoundTrip) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  auto lock = redis_py(1);
  ASSERT_TRUE(lock);
  auto round_trip = lock->noop();
  ASSERT_TRUE(round_trip) << round_trip.error().message;
  EXPECT_GT(round_trip->count(), 0);
  EXPECT_LT(*round_trip, 1s);
}

TEST_F(AdapterLockTest, DestructionReapsTheAdapter) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  auto lock = redis_py(1);
  ASSERT_TRUE(lock);
  const pid_t pid = lock->pid();
  ASSERT_FALSE(gone(pid));
  lock.reset();
  EXPECT_TRUE(gone(pid));
  EXPECT_EQ(adapter_children(), 0);
}

TEST_F(AdapterLockTest, NotJsonAtInit) {
  expect_create_fails({kBroken + "garbage.py", "not-json"}, "printed a line that is not JSON: hello");
}

TEST_F(AdapterLockTest, ExitsAtStart) { expect_create_fails({kBroken + "exits_at_start.py"}, "exited with status 3"); }

// setsid() would take the adapter out of reach of a pause or a crash of its client where
// clients get no cgroup (support/client_cgroup.h; LOCKLAB_NO_CGROUP asks for that here).
TEST_F(AdapterLockTest, LeavesTheClientsGroup) {
  ::setenv("LOCKLAB_NO_CGROUP", "1", 1);
  expect_create_fails({kBroken + "leaves_group.py"}, "left its client's process group");
  ::unsetenv("LOCKLAB_NO_CGROUP");
}

TEST_F(AdapterLockTest, MissingProgram) { expect_create_fails({kBroken + "no_such_adapter"}, "could not start"); }

// An adapter that fails after init: the call that sent the request returns
// `sent` with one line containing `what`; the next call fails at once, as a
// definite error (nothing was sent); destruction leaves no process.
void expect_broken_mid_run(std::unique_ptr<AdapterLock> lock, const std::string& name, const std::string& what) {
  ASSERT_TRUE(lock);
  const pid_t pid = lock->pid();
  const auto began = std::chrono::steady_clock::now();
  EXPECT_EQ(lock->try_acquire(100ms), Acquire::unknown);
  const std::string line = lock->last_error();
  EXPECT_LT(std::chrono::steady_clock::now() - began, 2s) << line;
  EXPECT_TRUE(one_line(line)) << line;
  EXPECT_NE(line.find(name), std::string::npos) << line;
  EXPECT_NE(line.find(what), std::string::npos) << line;
  EXPECT_EQ(lock->try_acquire(0ms), Acquire::error);
  EXPECT_EQ(lock->last_error(), line);
  EXPECT_EQ(lock->release(), Release::error);
  lock.reset();
  EXPECT_TRUE(gone(pid));
  EXPECT_EQ(adapter_children(), 0);
}

TEST_F(AdapterLockTest, WrongShape) {
  expect_broken_mid_run(broken({kBroken + "garbage.py", "shape"}), "garbage.py", "answered acquire with");
}

TEST_F(AdapterLockTest, WrongId) {
  expect_broken_mid_run(broken({kBroken + "garbage.py", "wrong-id"}), "garbage.py", "answered acquire (id 2) with");
}

TEST_F(AdapterLockTest, ExitsMidRun) {
  expect_broken_mid_run(broken({kBroken + "exits_mid_run.py"}), "exits_mid_run.py",
                        "exited with status 4 before answering acquire");
}

// A runtime that dies at start says why on its stderr: the line is in the error, not only the status.
TEST_F(AdapterLockTest, FailsAtStartSaysWhy) {
  expect_create_fails({kBroken + "fails_at_start.py"},
                      "exited with status 1 before answering init: ModuleNotFoundError: No module named "
                      "'locklab_no_such_library'");
}

// An adapter that dies of an error while its client holds the lock: died_now() sees it at
// once, without a call (the client then crashes inside its section, workload/client_loop.cpp), and it
// is a death with its line, not a broken adapter.
TEST_F(AdapterLockTest, DiesInTheSectionIsSeenAtOnce) {
  auto lock = broken({kBroken + "dies_after_acquire.py", "error"});
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(100ms), Acquire::acquired) << lock->last_error();
  EXPECT_FALSE(lock->died_now());
  std::this_thread::sleep_for(400ms);
  EXPECT_TRUE(lock->died_now());
  EXPECT_NE(lock->died().find("exited with status 1 during the section: the service dies on RuntimeError: the "
                              "connection pool died"),
            std::string::npos)
      << lock->died();
  EXPECT_EQ(lock->release(), Release::error);
}

// One that exits 0 is no crash (#26 is a runtime dying on an error): a broken adapter, an error.
TEST_F(AdapterLockTest, ExitsCleanlyInTheSectionIsBroken) {
  auto lock = broken({kBroken + "dies_after_acquire.py", "clean"});
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(100ms), Acquire::acquired) << lock->last_error();
  std::this_thread::sleep_for(400ms);
  EXPECT_FALSE(lock->died_now());
  EXPECT_TRUE(lock->died().empty()) << lock->died();
  EXPECT_NE(lock->broken().find("exited with status 0 during the section"), std::string::npos) << lock->broken();
  EXPECT_EQ(lock->release(), Release::error);
}

// blocked_ms is liveness only on `unknown` after the wait was really spent; else the
// adapter's word alone is a protocol error.
TEST_F(AdapterLockTest, BlockedOnlyOnUnknownAfterTheWait) {
  for (const char* mode : {"acquired-now", "unknown-now"}) {
    auto lock = broken({kBroken + "blocked_word.py", mode});
    ASSERT_TRUE(lock);
    EXPECT_EQ(lock->try_acquire(200ms), Acquire::unknown) << mode;
    EXPECT_NE(lock->broken().find("answered acquire with blocked_ms after"), std::string::npos) << lock->broken();
    EXPECT_TRUE(one_line(lock->last_error())) << lock->last_error();
    EXPECT_EQ(lock->blocked().calls, 0u) << mode;
  }
  auto lock = broken({kBroken + "blocked_word.py", "unknown-late"});
  ASSERT_TRUE(lock);
  EXPECT_EQ(lock->try_acquire(200ms), Acquire::unknown);
  EXPECT_TRUE(lock->broken().empty()) << lock->broken();
  EXPECT_EQ(lock->blocked().calls, 1u);
  EXPECT_EQ(lock->blocked().acquires, 1u);
}

TEST_F(AdapterLockTest, SilentIsBoundedAndKilled) {
  // wait 100 ms + margin 300 ms; silent.py ignores the end of its stdin, so only SIGKILL ends it.
  expect_broken_mid_run(broken({kBroken + "silent.py"}), "silent.py", "did not answer acquire within 400 ms");
}

// A client that crashes takes its adapter along (PR_SET_PDEATHSIG), even one
// that ignores the end of its stdin: no orphan outlives a SIGKILLed client.
TEST_F(AdapterLockTest, CrashedClientTakesItsAdapter) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t client = ::fork();
  ASSERT_GE(client, 0);
  if (client == 0) {
    auto made = AdapterLock::create({kBroken + "silent.py"}, config(), 1, kShort);
    const pid_t adapter = made ? made.value()->pid() : -1;
    [[maybe_unused]] const auto written = ::write(report[1], &adapter, sizeof adapter);
    ::pause();
    ::_exit(0);
  }
  ::close(report[1]);
  pid_t adapter = -1;
  ASSERT_EQ(::read(report[0], &adapter, sizeof adapter), static_cast<ssize_t>(sizeof adapter));
  ::close(report[0]);
  ASSERT_GT(adapter, 0);
  EXPECT_FALSE(dead(adapter));
  ::kill(client, SIGKILL);
  ::waitpid(client, nullptr, 0);
  EXPECT_TRUE(harness::wait_until([adapter] { return dead(adapter); }, 5000ms))
      << "adapter " << adapter << " outlived its client";
}

// The bound AdapterLock waits under: a gap longer than two steps (a stop)
// counts as two steps; the bound is spent in steps of at most one, then says 0.
TEST(AwakeBound, AGapCountsAsTwoStepsAndTheLastWaitIsZero) {
  harness::AwakeBound bound(300ms);
  EXPECT_LE(bound.next_wait(), harness::kAwakeStep);
  std::this_thread::sleep_for(500ms);  // the gap under test, as a stopped process sees it
  EXPECT_GT(bound.next_wait(), 0ms) << "a 500 ms gap spent a 300 ms bound";
  EXPECT_FALSE(bound.spent());
  EXPECT_TRUE(harness::wait_until([&] { return bound.next_wait() == 0ms; }, 5'000ms, 10ms));
  EXPECT_TRUE(bound.spent());
}

// How often `pid`'s main thread went to sleep of its own accord (it waits in
// poll() steps: each step it woke from and slept again counts), or -1.
long long voluntary_switches(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stoll(line.substr(line.find(':') + 1));
  return -1;
}

// A SIGSTOP does not spend the client's bound (review #2): the client and its
// adapter are stopped (a holder-pause stops its whole group) for longer than
// the margin while a release is out, and the adapter answers only after both
// are continued. Before support/awake_time.h the client's deadline ran out
// during the stop and it reported "did not answer release" at once.
TEST_F(AdapterLockTest, AStopLongerThanTheMarginDoesNotSpendTheBound) {
  const std::string cue = ::testing::TempDir() + "locklab-cue-" + std::to_string(::getpid());
  std::remove((cue + ".got").c_str());
  std::remove((cue + ".go").c_str());
  const pid_t client = ::fork();
  ASSERT_GE(client, 0);
  if (client == 0) {  // a client process leading its group, its adapter in it (as the workload's)
    ::setpgid(0, 0);
    auto made = AdapterLock::create({kBroken + "answers_on_cue.py", cue}, config(), 1);  // margin 2 s
    if (!made || (*made)->try_acquire(0ms) != Acquire::acquired) ::_exit(3);
    ::_exit((*made)->release() == Release::released ? 0 : 1);
  }
  ::setpgid(client, client);
  auto exists = [](const std::string& path) { return std::ifstream(path).good(); };
  ASSERT_TRUE(harness::wait_until([&] { return exists(cue + ".got"); }, 10'000ms)) << "the release never arrived";
  {
    auto paused = harness::PausedProcess::pause(client);
    ASSERT_TRUE(paused) << paused.error().message;
    EXPECT_TRUE(paused->group());
    const auto until = std::chrono::steady_clock::now() + 2'500ms;  // the stop: longer than the 2 s margin
    harness::wait_until([&] { return std::chrono::steady_clock::now() >= until; }, 3'000ms, 10ms);
  }  // SIGCONT to the group
  // The answer comes only once the client has woken from two of its waits
  // since the continue (each at most kAwakeStep), each ending with a look at
  // its bound, and is still alive: a bound the stop had spent ends it at once.
  const long long woken_before = voluntary_switches(client);
  ASSERT_GE(woken_before, 0);
  ASSERT_TRUE(harness::wait_until([&] { return voluntary_switches(client) >= woken_before + 3; }, 10'000ms, 5ms))
      << "the continued client never woke";
  int early = 0;
  ASSERT_EQ(::waitpid(client, &early, WNOHANG), 0) << "the client gave up before the answer came";
  std::ofstream(cue + ".go").put('\n');
  int status = 0;
  ASSERT_EQ(::waitpid(client, &status, 0), client);
  std::remove((cue + ".got").c_str());
  std::remove((cue + ".go").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the release was not `released` (the bound ran out during the stop)";
}

}  // namespace
}  // namespace locklab::testing
