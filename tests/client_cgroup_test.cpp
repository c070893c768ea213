// support/client_cgroup.h and its use by support/process_control.h (issue 25, "the fault
// reaches the whole client"): a forked child in a client cgroup forks a grandchild that
// calls setsid() -- out of the child's process group, in its cgroup still. A pause freezes
// both, a crash or kill_all() kills both, and the run's cgroups are gone afterwards. Skipped
// with the probe's one line where the machine gives no usable cgroup. Without a cgroup, the
// tree check finds the setsid grandchild.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include <gtest/gtest.h>

#include "support/client_cgroup.h"
#include "support/conditions.h"
#include "support/process_control.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

// Two counters the child and its grandchild bump while they run (shared memory, made before fork).
struct Beats {
  Beats() {
    void* base = ::mmap(nullptr, sizeof(std::atomic<long>) * 3, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cells = static_cast<std::atomic<long>*>(base);
    for (int i = 0; i < 3; ++i) new (&cells[i]) std::atomic<long>(0);
  }
  ~Beats() { ::munmap(cells, sizeof(std::atomic<long>) * 3); }
  std::atomic<long>* cells;  // [0] child, [1] grandchild, [2] the grandchild's pid
};

[[noreturn]] void beat_forever(std::atomic<long>& beat) {
  for (;;) {
    beat.fetch_add(1);
    ::usleep(1000);
  }
}

// In the child: join `cgroup` (when given), fork a grandchild that leaves the group and
// session (setsid), then beat; `crash` makes it call exit_with_group(3) once both beat.
[[noreturn]] void child_body(const ClientCgroup* cgroup, Beats& beats, bool crash) {
  if (cgroup != nullptr && !cgroup->join(0)) ::_exit(90);
  ::setpgid(0, 0);
  const pid_t grandchild = ::fork();
  if (grandchild == 0) {
    ::setsid();
    beat_forever(beats.cells[1]);
  }
  beats.cells[2].store(grandchild);
  if (crash) {
    while (beats.cells[1].load() == 0) ::usleep(1000);
    exit_with_group(3);
  }
  beat_forever(beats.cells[0]);
}

bool dead_or_zombie(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && (line[close + 2] == 'Z' || line[close + 2] == 'X');
}

// The grandchild in its own session: not in the child's group.
bool left_group(pid_t child, pid_t grandchild) { return ::getpgid(grandchild) != child && ::getsid(grandchild) == grandchild; }

class ClientCgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (no_cgroup_asked()) GTEST_SKIP() << "LOCKLAB_NO_CGROUP is set";
    run_.emplace(CgroupRun::create());
    if (run_->kind() == CgroupKind::none) GTEST_SKIP() << "no usable cgroup on this machine: " << run_->why();
    auto made = run_->client(0);
    ASSERT_TRUE(made) << made.error().message;
    cgroup_.emplace(*made);
  }

  // Forks the child; returns once both it and its setsid grandchild beat, in the cgroup.
  pid_t start(bool crash) {
    const pid_t pid = ::fork();
    if (pid == 0) child_body(&*cgroup_, beats_, crash);
    EXPECT_TRUE(wait_until([&] { return beats_.cells[1].load() > 0 && (crash || beats_.cells[0].load() > 0); }, 5s))
        << "the child and its grandchild never ran";
    return pid;
  }

  std::optional<CgroupRun> run_;
  std::optional<ClientCgroup> cgroup_;
  Beats beats_;
};

TEST_F(ClientCgroupTest, APauseFreezesTheChildAndItsSetsidGrandchild) {
  const pid_t child = start(false);
  const auto grandchild = static_cast<pid_t>(beats_.cells[2].load());
  EXPECT_TRUE(left_group(child, grandchild)) << "a signal to the child's group would miss the grandchild";
  ASSERT_TRUE(client_cgroup_of(child)) << "the child is not in a locklab client cgroup";
  EXPECT_EQ(client_cgroup_of(child)->path(), cgroup_->path());
  EXPECT_EQ(client_members(child).size(), 2u) << "the cgroup holds the child and the grandchild";
  {
    auto paused = PausedProcess::pause(child);
    ASSERT_TRUE(paused) << paused.error().message;
    ASSERT_TRUE(paused->cgroup()) << "the pause did not use the cgroup";
    EXPECT_EQ(paused->members(), 2u);
    EXPECT_TRUE(cgroup_->frozen()) << "cgroup.events / freezer.state does not say frozen";
    const long child_then = beats_.cells[0].load(), grandchild_then = beats_.cells[1].load();
    std::this_thread::sleep_for(50ms);  // a negative check: nothing may move, so it needs a span
    EXPECT_EQ(beats_.cells[0].load(), child_then) << "the child ran while frozen";
    EXPECT_EQ(beats_.cells[1].load(), grandchild_then) << "the setsid grandchild ran while frozen";
  }  // thawed here
  const long child_now = beats_.cells[0].load(), grandchild_now = beats_.cells[1].load();
  EXPECT_TRUE(wait_until([&] { return beats_.cells[0].load() > child_now && beats_.cells[1].load() > grandchild_now; }, 5s))
      << "they did not run on after the thaw";
  EXPECT_TRUE(cgroup_->kill_all(2000ms, child)) << "a process outlived kill_all()";
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(wait_until([&] { return dead_or_zombie(grandchild); }, 2s)) << "the setsid grandchild outlived the kill";
  EXPECT_TRUE(cgroup_->pids().empty());
}

TEST_F(ClientCgroupTest, ACrashFromInsideKillsTheSetsidGrandchildToo) {
  const pid_t child = start(true);
  const auto grandchild = static_cast<pid_t>(beats_.cells[2].load());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "exit_with_group did not kill its cgroup";
  EXPECT_TRUE(wait_until([&] { return dead_or_zombie(grandchild); }, 2s)) << "the setsid grandchild outlived the crash";
  EXPECT_TRUE(wait_until([&] { return cgroup_->pids().empty(); }, 2s));
}

TEST_F(ClientCgroupTest, TheRunsCgroupsAreRemovedWhenItEnds) {
  const pid_t child = start(false);
  const std::string path = cgroup_->path();
  const std::string run_dir = path.substr(0, path.rfind('/'));
  ASSERT_TRUE(std::filesystem::exists(path));
  run_.reset();  // kills what is left (reaping our children: the child too), removes the cgroups
  EXPECT_TRUE(dead_or_zombie(child));
  ::waitpid(child, nullptr, WNOHANG);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(run_dir));
}

// A Ctrl-C while a client is frozen: the signal guard's kill_live_client_cgroups()
// kills the child and its setsid grandchild, frozen as they are (the v1
// freezer delivers a SIGKILL only after a thaw, which the guard does).
void expect_the_guard_kills_a_frozen_client(ClientCgroup& cgroup, Beats& beats, pid_t child) {
  const auto grandchild = static_cast<pid_t>(beats.cells[2].load());
  ASSERT_TRUE(cgroup.freeze());
  ASSERT_TRUE(wait_until([&] { return cgroup.frozen(); }, 5s)) << "never frozen";
  kill_live_client_cgroups();
  EXPECT_TRUE(wait_until([&] { return dead_or_zombie(child) && dead_or_zombie(grandchild); }, 5s))
      << "a frozen process outlived the guard's kill";
  int status = 0;
  EXPECT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST_F(ClientCgroupTest, TheSignalGuardKillsAFrozenClient) {
  const pid_t child = start(false);
  expect_the_guard_kills_a_frozen_client(*cgroup_, beats_, child);
}

// The same under each kind the machine has (LOCKLAB_CGROUP narrows the probe):
// a hybrid machine's v1 freezer is checked too, not only the kind it prefers.
TEST(ClientCgroupKinds, TheSignalGuardKillsAFrozenClientUnderEachKind) {
  if (no_cgroup_asked()) GTEST_SKIP() << "LOCKLAB_NO_CGROUP is set";
  int tried = 0;
  for (const std::string_view kind : {"cgroup2", "cgroup1-freezer"}) {
    ::setenv("LOCKLAB_CGROUP", std::string(kind).c_str(), 1);
    auto run = CgroupRun::create();
    ::unsetenv("LOCKLAB_CGROUP");
    if (run.kind() == CgroupKind::none) continue;  // not on this machine
    ++tried;
    SCOPED_TRACE(std::string(kind));
    EXPECT_EQ(std::string_view(isolation_name(run.kind())), kind);
    auto cgroup = run.client(0);
    ASSERT_TRUE(cgroup) << cgroup.error().message;
    Beats beats;
    const pid_t child = ::fork();
    if (child == 0) child_body(&*cgroup, beats, false);
    ASSERT_TRUE(wait_until([&] { return beats.cells[1].load() > 0 && beats.cells[0].load() > 0; }, 5s));
    expect_the_guard_kills_a_frozen_client(*cgroup, beats, child);
  }
  if (tried == 0) GTEST_SKIP() << "no usable cgroup of either kind on this machine";
}

// Without a cgroup the adapter's check walks the tree: the setsid grandchild is found.
TEST(ProcessTreeTest, TheTreeCheckFindsASetsidGrandchild) {
  Beats beats;
  const pid_t child = ::fork();
  if (child == 0) child_body(nullptr, beats, false);
  ::setpgid(child, child);
  ASSERT_TRUE(wait_until([&] { return beats.cells[1].load() > 0 && beats.cells[0].load() > 0; }, 5s));
  const auto grandchild = static_cast<pid_t>(beats.cells[2].load());
  EXPECT_EQ(tree_member_outside(child, child), std::optional<pid_t>(grandchild));
  ::kill(grandchild, SIGKILL);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(wait_until([&] { return dead_or_zombie(grandchild); }, 2s));
}

}  // namespace
}  // namespace locklab::harness
