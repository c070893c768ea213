// ProcessActor (harness/scenario/process_actor.h): a fork()ed actor whose narration is
// relayed into the parent's steps, and that SIGSTOP freezes as a whole.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "scenario/process_actor.h"
#include "support/process_control.h"

using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> texts_of(const Narrator& narrator, const std::string& who) {
  std::vector<std::string> texts;
  for (const auto& step : narrator.steps())
    if (step["who"] == who) texts.push_back(step["text"]);
  return texts;
}

}  // namespace

TEST(ProcessActor, ChildStepsAreRelayedInOrderWithItsCriticalSection) {
  Narrator narrator(false);
  auto actor = ProcessActor::start(narrator, "X", [](ProcessActor::Child& me) {
    me.say("one");
    me.enter();
    me.tell_parent();
    me.wait_for_parent();
    me.leave();
    me.say("two");
  });
  ASSERT_TRUE(actor) << actor.error().message;
  ASSERT_TRUE((*actor)->wait_for_child());
  EXPECT_NE((*actor)->pid(), ::getpid());
  (*actor)->tell_child();
  EXPECT_EQ((*actor)->join(), 0);
  EXPECT_EQ(texts_of(narrator, "X"),
            (std::vector<std::string>{"one", "enters the critical section", "leaves the critical section", "two"}));
  const auto timeline = narrator.timeline();
  ASSERT_EQ(timeline["sections"].size(), 1u);
  EXPECT_EQ(timeline["labels"][0], "X");
}

// A child someone else reaped left no status: join() must not call that a clean exit.
TEST(ProcessActor, AChildReapedElsewhereJoinsAsUnknownNotAsSuccess) {
  Narrator narrator(false);
  auto actor = ProcessActor::start(narrator, "X", [](ProcessActor::Child&) { std::_Exit(3); });
  ASSERT_TRUE(actor) << actor.error().message;
  int status = 0;
  ASSERT_EQ(::waitpid((*actor)->pid(), &status, 0), (*actor)->pid());
  EXPECT_EQ((*actor)->join(), ProcessActor::kExitUnknown);
}

TEST(ProcessActor, SigstopFreezesTheChildUntilSigcont) {
  Narrator narrator(false);
  auto actor = ProcessActor::start(narrator, "ticker", [](ProcessActor::Child& me) {
    for (;;) {
      me.tell_parent();
      std::this_thread::sleep_for(1ms);
    }
  });
  ASSERT_TRUE(actor) << actor.error().message;
  ASSERT_TRUE((*actor)->wait_for_child());
  {
    auto paused = PausedProcess::pause((*actor)->pid());
    ASSERT_TRUE(paused) << paused.error().message;
    // Ticks sent before the stop drain; then none come while it is stopped.
    int drained = 0;
    while ((*actor)->wait_for_child(200ms)) ASSERT_LT(++drained, 5000) << "the child kept ticking while stopped";
  }  // SIGCONT
  EXPECT_TRUE((*actor)->wait_for_child());
}

TEST(ProcessActor, DestroyingItKillsAndReapsEvenAStoppedChild) {
  Narrator narrator(false);
  pid_t pid = -1;
  {
    auto actor = ProcessActor::start(narrator, "stuck", [](ProcessActor::Child& me) { me.wait_for_parent(); });
    ASSERT_TRUE(actor) << actor.error().message;
    pid = (*actor)->pid();
    ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  }
  errno = 0;
  EXPECT_EQ(::kill(pid, 0), -1);  // reaped: the pid is gone
  EXPECT_EQ(errno, ESRCH);
}
