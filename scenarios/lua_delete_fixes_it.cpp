// Seed 004 §7 优化分布式锁_LUA脚本保证删除的原子性: check_then_delete_race's
// interleaving once more. index1's work is short, but its release stalls
// (parked just before the release: a GC pause, a slow network), its key expires,
// index2 takes the lock, index1 releases. lua-safe-delete sends the check and
// the delete as one script: Redis runs it without interleaving another command
// (and with time frozen), so it sees index2's token and deletes nothing.
// set-nx-px-token, the counter-example, checks with GET and deletes with a
// second command: parked between the two, it deletes index2's lock.
#include <sstream>

#include "g4_lua_safe_delete.h"

#include "scenario/claims.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "scenario/story_stages.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  Scenario story(scenario_spec("lua_delete_fixes_it"), argc, argv);
  auto [server, probe, config, gate, index1, index2] = parked_at_window(story, 100ms, "index1", "index2");
  const bool scripted = story.runs_script(ScriptRole::compare_and_delete);
  if (scripted) {
    story.say("release is one script, EVALSHA'd with KEYS[1] = lock, ARGV[1] = the holder's token:");
    std::istringstream script(kCompareAndDeleteLua);
    for (std::string line; std::getline(script, line);)
      if (!line.empty()) story.say("  | {}", line);
    story.say("the seed's script returns 0 for both 'not yours' and 'no key'; ours answers -1 for the latter");
  } else {
    story.say("release is two commands: GET lock, compare with our token, then DEL lock");
  }

  Release index1_release = Release::error;
  auto first = story.actor("index1", [&] {
    const double asked = story.narrator().now_ms();
    if (index1->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "index1");
    story.narrator().enter();
    say_release_begins(story, "index1", asked, config.ttl);
    story.narrator().leave();
    index1_release = story.release(*index1);
  });
  if (!gate->wait_arrival()) story.die("{} never reached {}", "index1", story.window());
  story.say_claiming({claim::after_lease(claim::next("index1", {{"command", {"DEL", "EVAL", "EVALSHA"}}}), claim::last("index1", {{"effect", "acquired"}}))},
            scripted ? "index1 is parked at step point {} (nothing sent yet: the whole check-and-delete is still "
                       "ahead); its release stalls there for longer than the lease"
                     : "index1 is parked at step point {} (its GET said: mine; the DEL is still ahead); its release "
                       "stalls there for longer than the lease",
            story.window());
  story.wait_for("index1's key expired", probe.key_absent(config.key));

  if (!story.tries_once("index2", *index2)) story.die("{} could not take the expired lock", "index2");

  gate->open();
  first->join();
  const bool deleted = story.observe([&] { return probe.exists(config.key); }) == false;
  if (scripted && !deleted)
    story.say("the script's GET saw index2's token, so it returned 0 (not_owner) and never ran its DEL");
  story.say_claiming({claim::inside("index2")}, deleted ? "the lock key is gone while index2 still believes it holds it"
                                                       : "index2's lock is still there");
  return story.finish(deleted, deleted ? "the check was stale by the time the DEL ran: a third client could enter"
                                       : "check and delete ran as one script: index2's lock survived");
}
