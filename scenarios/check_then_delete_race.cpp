// Seed 004 §6 (防止误删除 / 缺乏原子性): index1's release checks "GET lock == my
// uuid", the key expires in the gap, index2 acquires, and index1's DEL removes
// index2's lock. With lua-safe-delete (§7) the check and the delete are one
// script and index2's lock survives.
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "scenario/step_gate.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  Scenario story(scenario_spec("check_then_delete_race"), argc, argv);
  auto [server, probe, config] = story.single_server(100ms);
  StepGate gate(story.window());
  LockConfig index1_config = config;
  index1_config.step = gate.hook();
  auto index1 = story.make_lock(index1_config);
  auto index2 = story.make_lock(config);

  auto first = story.actor("index1", [&] {
    if (index1->try_acquire(0ms) != Acquire::acquired) story.die("index1 could not acquire a free lock");
    story.narrator().enter();
    story.say("its work takes longer than the 100 ms lease");
    story.narrator().leave();
    story.say("releases: " + std::string(to_string(index1->release())));
  });
  if (!gate.wait_arrival()) story.die("index1 never reached " + story.window());
  story.say("index1 is parked at step point " + story.window());
  story.wait_for("index1's key expired", probe.key_absent(config.key));

  if (!story.tries_once("index2", *index2)) story.die("index2 could not take the expired lock");

  gate.open();
  first->join();
  const bool deleted = probe.exists(config.key) == false;
  story.say(deleted ? "the lock key is gone while index2 still believes it holds it"
                    : "index2's lock is still there");
  return story.finish(deleted, deleted ? "a third client could now enter beside index2"
                                       : "the compare-and-delete saw another token and left the key");
}
