// Redlock (seed 004 §10 优化分布式锁_Redlock算法, redis.io "Distributed Locks
// with Redis"): with 5 independent masters N1..N5 (named so on every line that
// went to one of them) and 2 of them dead, a client still gets 3 votes -- a
// majority -- and holds the lock; a second client gets at most the other
// votes that are left, none, and is refused; once A releases, B gets the
// same 3 live masters. A minority of failures costs neither availability nor
// mutual exclusion.
#include "g6_redlock.h"

#include "scenario/redlock_votes.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "servers/redis_server.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  Scenario story(scenario_spec("redlock_minority_down"), argc, argv);
  auto [masters, config] = story.masters(5, 5s);
  masters[3]->crash();
  masters[4]->crash();
  story.say("masters N4 ({0}) and N5 ({1}) are SIGKILLed: 3 of 5 remain", masters[3]->endpoint().to_string(),
            masters[4]->endpoint().to_string());

  auto lock_a = make_redlock(story, config);
  auto lock_b = make_redlock(story, config);
  auto& redlock_a = *lock_a;
  auto& redlock_b = *lock_b;

  if (!tries_once(story, "A", redlock_a)) story.die("A did not get the 3 votes of the live masters");
  const bool b_holds = tries_once(story, "B", redlock_b);

  // The other half of the lesson: the minority down costs no availability either.
  story.actor("A", [&] { story.release(redlock_a); })->join();
  if (b_holds || !tries_once(story, "B", redlock_b)) story.die("B did not get the lock after A released it");
  story.say("after A's release B holds with the same 3 live masters: 2 of 5 down cost no availability");
  return story.finish(b_holds, b_holds ? "B counted a majority though A holds 3 of 5"
                                       : "A holds with 3 of 5 votes; B got 0 for, 3 against, 2 unreachable");
}
