// Redlock's restart problem (redis.io "Distributed Locks with Redis", Safety
// arguments / Performance, crash-recovery and fsync; seed 004 §10): A holds the
// lock on A, B and C (D and E were down). C crashes and restarts at once with
// persistence off: it comes back empty. Client Z then gets C, D and E -- a
// majority -- while A's validity has not run out: two holders. The remedy the
// page gives, without fsync: keep a crashed node down for longer than the TTL
// (--delayed-restart); Z is refused while C is down and gets the lock only
// after A's validity has ended.
#include "g6_redlock.h"
#include "servers/redis_server.h"
#include "redlock_votes.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

constexpr auto kTtl = 1500ms;

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("redlock_restart_without_persistence"), argc, argv);
  const bool delayed = story.flag("delayed-restart");
  auto [masters, config] = story.masters(5, kTtl);
  const NodeNames names = name_nodes(masters);
  auto& c = *masters[2];
  auto lock_a = story.make_lock(config);
  auto lock_z = story.make_lock(config);
  auto& holder = dynamic_cast<RedlockLock&>(*lock_a);
  auto& contender = dynamic_cast<RedlockLock&>(*lock_z);

  masters[3]->crash();
  masters[4]->crash();
  story.say("nodes D and E are down while A acquires");
  if (!tries_once(story, "A", holder, names)) story.die("A did not get A, B and C");
  story.must(masters[3]->restart(), "restart D");
  story.must(masters[4]->restart(), "restart E");
  story.say("D and E are back (empty: they never saw A's key)");

  c.crash();
  story.say("node C crashes (SIGKILL); persistence is off, A's key on C is gone");
  auto z_tries = [&](const std::string& when) {
    const bool acquired = tries_once(story, "Z", contender, names);
    story.say(when + ": Z " + (acquired ? "holds the lock" : "is refused"));
    return acquired;
  };

  if (delayed) {
    if (z_tries("C still down")) story.die("Z got a majority with C down");
    const auto a_valid_until = *holder.valid_until();
    story.wait_for("A's validity ran out (C stays down meanwhile)",
                   [&] { return std::chrono::steady_clock::now() > a_valid_until; });
    story.actor("A", [&] {
      story.say("its validity is over: it stops using the lock");
      story.narrator().leave();
    })->join();
  }
  story.must(c.restart(), "restart C");
  story.say(std::string("C restarts ") + (delayed ? "after the TTL" : "at once") + ", empty");

  const bool z_holds = z_tries("after C's restart");
  const auto a_valid_until = holder.valid_until();
  const bool overlap = z_holds && a_valid_until && std::chrono::steady_clock::now() < *a_valid_until;
  if (z_holds)
    story.say(overlap ? "A's validity has not run out: A still holds it too"
                      : "A's validity had run out before Z acquired: one holder at a time");
  if (delayed && !z_holds) story.die("Z could not acquire after A's validity ended");
  if (!delayed && !z_holds) story.die("Z did not get C, D and E");
  return story.finish(overlap, overlap ? "C forgot A's key on restart: C, D and E voted for Z"
                                       : "C came back only after A's lease was over everywhere");
}
