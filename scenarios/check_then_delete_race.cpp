// Seed 004 §6 优化分布式锁_防止误删除 (问题：缺乏原子性): index1's work is short,
// but its release stalls after its check "GET lock == my uuid" (parked at the
// step point: a GC pause, a slow network); the key expires in the gap, index2
// acquires, and index1's DEL removes index2's lock. With lua-safe-delete
// (§7 优化分布式锁_LUA脚本保证删除的原子性) the check and the delete are one
// script, the stall can only come before it, and index2's lock survives.
#include "scenario/claims.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "scenario/story_stages.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  Scenario story(scenario_spec("check_then_delete_race"), argc, argv);
  auto [server, probe, config, gate, index1, index2] = parked_at_window(story, 100ms);

  auto first = story.actor("index1", [&] {
    const double asked = story.narrator().now_ms();
    if (index1->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "index1");
    story.narrator().enter();
    say_release_begins(story, "index1", asked, config.ttl);
    story.narrator().leave();
    story.release(*index1);
  });
  if (!gate->wait_arrival()) story.die("{} never reached {}", "index1", story.window());
  // Claimed: index1's delete (GET's DEL, or the script) reaches the server after the lease ran out.
  story.say_claiming({claim::after_lease(claim::next("index1", {{"command", {"DEL", "EVAL", "EVALSHA"}}}), claim::last("index1", {{"effect", "acquired"}}))},
            story.runs_script(ScriptRole::compare_and_delete)
                ? "index1 is parked at step point {}: its release stalls before it sends anything, for longer than "
                  "the lease (a GC pause, a slow network)"
                : "index1 is parked at step point {}: its release stalls between its GET (\"mine\") and its DEL, for "
                  "longer than the lease (a GC pause, a slow network)",
            story.window());
  story.wait_for("index1's key expired", probe.key_absent(config.key));

  if (!story.tries_once("index2", *index2)) story.die("{} could not take the expired lock", "index2");

  gate->open();
  first->join();
  const bool deleted = probe.exists(config.key) == false;
  story.say_claiming({claim::inside("index2")}, deleted ? "the lock key is gone while index2 still believes it holds it"
                                                       : "index2's lock is still there");
  return story.finish(deleted, text(deleted ? "a third client could now enter beside index2"
                                            : "the compare-and-delete saw another token and left the key"));
}
