// Seed 004 §8 优化分布式锁_可以重入: testLock() holds the lock and calls
// testSubLock(), which takes the same lock again with the same uuid. SET NX
// cannot tell its own holder from a stranger (and lua-safe-delete's token is
// per acquisition: uuid-1 plus fresh bits): the nested call waits for a lock
// only its own caller can release, until the 10 s lease runs out -- bounded
// here by the wait. The hash lock (reentrant-watchdog, the seed's HINCRBY
// script) counts holds per owner field: it enters twice and must release twice
// (still_held, then released; its script answers the holds left, the reverse
// of the seed's 0/1, which Scenario::release says on screen).
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
    if (lock->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "testLock");
    story.narrator().enter();
    story.say(story.capabilities().reentrant
                  ? "calls testSubLock(), which takes the same lock with the same owner field (uuid-1:<thread>)"
                  : "calls testSubLock(), which takes the same lock as owner uuid-1 again; each acquisition's token "
                    "is uuid-1 plus fresh bits, and SET NX refuses any value while the key exists");
    {
      ActorName nested("testSubLock");
      nested_entered = lock->try_acquire(kNestedWait) == Acquire::acquired;
      if (nested_entered) {
        story.say("entered again: the lock counts this owner's holds");
        show_key();
        inner = story.release(*lock);
      } else {
        story.say("gave up after {} ms: it waited for a lock its own caller holds", kNestedWait.count());
        story.say("SET NX refuses any value while the key exists, the seed's same uuid included");
      }
    }
    if (nested_entered) show_key();
    story.narrator().leave();
    outer = story.release(*lock);
  });
  caller->join();
  const bool gone = story.observe([&] { return probe.exists(config.key); }) == false;

  if (nested_entered && (inner != Release::still_held || outer != Release::released || !gone))
    story.die("entered twice but released {}, then {}", to_string(inner), to_string(outer));
  return story.finish(!nested_entered,
                      nested_entered ? text("entered twice, released twice: still_held, then released")
                                     : text("the nested call gave up on its own lock; without a bound it would wait "
                                            "until the {} s lease ran out, then get the lock with a new token while "
                                            "its caller still believes it holds the old one",
                                            std::chrono::duration_cast<std::chrono::seconds>(kLease).count()));
}
