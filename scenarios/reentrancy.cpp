// Seed 004 §8 (可以重入): testLock() holds the lock and calls testSubLock(),
// which takes the same lock again with the same uuid. SET NX cannot tell its
// own holder from a stranger: the nested call waits for a lock only its own
// caller can release — a self-deadlock, bounded here by the wait. The hash
// lock (reentrant-watchdog, the seed's HINCRBY script) counts holds per
// owner: it enters twice and must release twice (still_held, then released).
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

constexpr auto kNestedWait = 300ms;  // the seed retries every 200 ms forever; we give up
constexpr auto kLease = 10s;         // far longer than the story: only reentrancy decides

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("reentrancy"), argc, argv);
  auto [server, probe, config] = story.single_server(kLease);
  config.retry_interval = 100ms;
  config.watchdog = false;  // a fixed lease: renewal is watchdog_renewal's story
  config.owner = "uuid-1";
  auto lock = story.make_lock(config);
  // What the lock key holds: a hash of {owner: holds} for the reentrant lock.
  const auto show_key = [&] { story.observe([&] { return probe.read({"HGETALL", config.key}); }); };

  bool nested_entered = false;
  Release inner = Release::error, outer = Release::error;
  auto caller = story.actor("testLock", [&] {
    if (lock->try_acquire(0ms) != Acquire::acquired) story.die("testLock could not acquire a free lock");
    story.narrator().enter();
    story.say("calls testSubLock(), which takes the same lock with the same owner");
    {
      ActorName nested("testSubLock");
      nested_entered = lock->try_acquire(kNestedWait) == Acquire::acquired;
      story.say(nested_entered ? "entered again: the lock counts this owner's holds"
                               : "gave up after " + std::to_string(kNestedWait.count()) +
                                     " ms: it waited for a lock its own caller holds");
      if (!nested_entered)
        story.say("SET NX refuses any value while the key exists, the seed's same uuid included");
      if (nested_entered) {
        show_key();
        inner = lock->release();
        story.say("releases: " + std::string(to_string(inner)));
      }
    }
    if (nested_entered) show_key();
    story.narrator().leave();
    outer = lock->release();
    story.say("releases: " + std::string(to_string(outer)));
  });
  caller->join();
  const bool gone = story.observe([&] { return probe.exists(config.key); }) == false;

  if (nested_entered && (inner != Release::still_held || outer != Release::released || !gone))
    story.die(std::string("entered twice but released ") + to_string(inner) + ", then " + to_string(outer));
  return story.finish(!nested_entered,
                      nested_entered ? "entered twice, released twice: still_held, then released"
                                     : "the nested call timed out on its own lock; without a bound it waits forever");
}
