// Seed 003's C3/C4 passage (before 五、代码实现) and §六.2 (六、一些问题 2),
// generation 2 (getset-timestamp). C0 holds the lock
// with a timestamp that has passed. C1 and C2 (the article's C3/C4) both SETNX
// (0), both GET C0's stamp, both see it expired, both GETSET. GETSET returns
// the previous value: only C1 gets C0's stamp back and wins; C2 gets C1's
// stamp, compares it with what it read, and backs off — but it has already
// written its own expiry over C1's ("C1的超时时间可能被C2覆盖了").
//
// §六.2 asks what the compare `oldValueStr.equals(currentValueStr)` is for: without
// it C2 would also return true — two holders. Generation 2 implements the
// seed's code, compare included, and has no mode that skips it; rather than
// fake one, both clients are parked at the step point between GET and GETSET
// (where §六.2's C1/C2 stand) and the narration shows the GETSET reply the
// compare rejects. The verdict is about the overwritten expiry; a second
// winner would be a failure of the compare and ends the story as unexpected.
#include "g2_getset_timestamp.h"

#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "scenario/step_gate.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

long long wall_ms() { return system_wall_clock()->now_ms().count(); }

// The stamp a client wrote (generation 2's own reading of its value); nullopt: no key.
std::optional<long long> stamp_of(const std::optional<std::string>& value) {
  return value ? parse_millis(*value) : std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("getset_c0_c1_c2"), argc, argv);
  auto [server, probe, config] = story.single_server(100ms, "lock.foo");  // the article's key
  StepGate c1_gate(story.window()), c2_gate(story.window());
  LockConfig c1_config = config, c2_config = config;
  c1_config.step = c1_gate.hook();
  c2_config.step = c2_gate.hook();
  auto c0_lock = story.make_lock(config);
  auto c1_lock = story.make_lock(c1_config);
  auto c2_lock = story.make_lock(c2_config);

  auto c0 = story.actor("C0", [&] {
    if (c0_lock->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "C0");
    story.narrator().enter();
    story.say("hangs in its critical section past the timestamp it wrote (it never releases)");
  });
  c0->join();
  const auto c0_stamp = stamp_of(probe.value(config.key));
  if (!c0_stamp) story.die("C0's key holds no timestamp");
  story.wait_for("C0's timestamp has passed on the wall clock", [&] { return wall_ms() > *c0_stamp; });

  bool c1_won = false, c2_won = false;
  auto c1 = story.actor("C1", [&] {
    c1_won = c1_lock->try_acquire(0ms) == Acquire::acquired;
    if (c1_won) story.narrator().enter();
  });
  if (!c1_gate.wait_arrival()) story.die("{} never reached {}", "C1", story.window());
  story.say("C1 read C0's expired stamp and is parked before its GETSET");
  // C2 computes its own stamp at least a millisecond later: the overwrite is visible.
  const long long c1_start = wall_ms();
  story.wait_for("the wall clock moved on a millisecond", [&] { return wall_ms() > c1_start + 1; });
  auto c2 = story.actor("C2", [&] { c2_won = c2_lock->try_acquire(0ms) == Acquire::acquired; });
  if (!c2_gate.wait_arrival()) story.die("{} never reached {}", "C2", story.window());
  story.say("C2 read the same expired stamp and is parked before its GETSET: both judged C0's lock expired");

  c1_gate.open();
  c1->join();
  const auto c1_stamp = stamp_of(probe.value(config.key));
  story.say(c1_won ? "C1's GETSET returned C0's stamp, equal to what it read: C1 holds the lock"
                   : "C1's GETSET did not return C0's stamp");
  if (!c1_won || !c1_stamp) story.die("C1 did not win the takeover");

  c2_gate.open();
  c2->join();
  story.say("C2's GETSET returned C1's stamp, not the one it read: the compare sends C2 back to waiting");
  story.say("without `oldValueStr.equals(currentValueStr)` that non-nil reply would be a win: C1 and C2 both inside "
            "(§六.2)");
  if (c2_won) story.die("C2 won as well: the compare failed to keep it out");
  const auto stored = stamp_of(story.observe([&] { return probe.value(config.key); }));
  const bool overwritten = stored && *stored != *c1_stamp;
  if (overwritten)
    story.say("C1 holds the lock, but the key carries C2's expiry, {} ms after the one C1 wrote", *stored - *c1_stamp);
  else
    story.say("the key still carries C1's expiry");
  return story.finish(overwritten, overwritten ? text("exactly one winner (C1); its expiry {} was overwritten by the "
                                                      "loser's {}",
                                                      *c1_stamp, *stored)
                                               : text("C1's expiry survived C2's GETSET"));
}
