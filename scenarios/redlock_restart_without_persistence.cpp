// Redlock's restart problem (redis.io "Distributed Locks with Redis", Safety
// arguments / Performance, crash-recovery and fsync; seed 004 §10
// 优化分布式锁_Redlock算法): client A holds the lock on nodes N1, N2 and N3 (N4
// and N5 were down). N3 crashes and restarts at once with persistence off: it
// comes back empty. Client Z then gets N3, N4 and N5 -- a majority -- while A's
// validity has not run out: two holders. The remedy the page gives, without
// fsync: keep a crashed node down for longer than the TTL (--delayed-restart);
// Z is refused while N3 is down and gets the lock only after A's validity has ended.
#include "g6_redlock.h"

#include "scenario/redlock_votes.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "servers/redis_server.h"

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
  auto& n3 = *masters[2];
  auto lock_a = make_redlock(story, config);
  auto lock_z = make_redlock(story, config);
  auto& holder = *lock_a;
  auto& contender = *lock_z;

  masters[3]->crash();
  masters[4]->crash();
  story.say("nodes N4 and N5 are down while A acquires");
  if (!tries_once(story, "A", holder)) story.die("A did not get N1, N2 and N3");
  story.must(masters[3]->restart(), "restarting {}", "N4");
  story.must(masters[4]->restart(), "restarting {}", "N5");
  story.say("N4 and N5 are back (empty: they never saw A's key)");

  n3.crash();
  story.say("node N3 crashes (SIGKILL); persistence is off, A's key on N3 is gone");
  auto z_tries = [&](std::string_view when) {
    const bool acquired = tries_once(story, "Z", contender);
    story.say(acquired ? "{}: Z holds the lock" : "{}: Z is refused", translated(when));
    return acquired;
  };

  if (delayed) {
    if (z_tries("N3 still down")) story.die("Z got a majority with N3 down");
    const auto a_valid_until = *holder.valid_until();
    story.wait_for("A's validity ran out (N3 stays down meanwhile)",
                   [&] { return std::chrono::steady_clock::now() > a_valid_until; });
    story.actor("A", [&] {
      story.say("its validity is over: it stops using the lock");
      story.narrator().leave();
    })->join();
  }
  story.must(n3.restart(), "restarting {}", "N3");
  story.say(delayed ? "N3 restarts after the TTL, empty" : "N3 restarts at once, empty");

  const bool z_holds = z_tries("after N3's restart");
  const auto a_valid_until = holder.valid_until();
  const bool overlap = z_holds && a_valid_until && std::chrono::steady_clock::now() < *a_valid_until;
  if (z_holds)
    story.say(overlap ? "A's validity has not run out: A still holds it too"
                      : "A's validity had run out before Z acquired: one holder at a time");
  if (delayed && !z_holds) story.die("Z could not acquire after A's validity ended");
  if (!delayed && !z_holds) story.die("Z did not get N3, N4 and N5");
  return story.finish(overlap, overlap ? "N3 forgot A's key on restart: N3, N4 and N5 voted for Z"
                                       : "N3 came back only after A's lease was over everywhere");
}
