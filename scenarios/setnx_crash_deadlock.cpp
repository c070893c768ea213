// Seed 004 §4 基于redis分布式锁的基本实现: "我们假设setnx刚好获取到锁，业务逻辑出现
// 异常，导致锁无法释放". A takes the lock with SETNX, does its work, leaves its
// critical section, and its process dies before its DEL is sent (a `finally`
// would catch an exception, but no finally runs in a dead process: kill -9, a
// crash, the machine gone), and the key stays forever (PTTL -1): B retries and
// never gets in. With a lease (setnx-expire's EXPIRE, lua-safe-delete's PX) the
// server frees it and B enters. The story is told in the order it happens: A
// leaves its section, then dies at the step point; a dead process leaves
// nothing afterwards (the narration test holds that: tests/narration_claims_test.py).
#include "scenario/claims.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "scenario/step_gate.h"
#include "scenario/story_stages.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

// B's patience: longer than any lease in this story (setnx-expire rounds the
// 100 ms TTL up to EXPIRE 1), so only a lock without a TTL keeps B out.
constexpr auto kPatience = 1500ms;

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("setnx_crash_deadlock"), argc, argv);
  // The seed sleeps 1 s between SETNX; retrying every 250 ms, a few narrated retries suffice.
  auto [server, probe, config, a_lock, b_lock] = contenders(story, 100ms, 250ms, crash_at(story.window()));

  auto a = story.actor("A", [&] {
    if (a_lock->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "A");
    story.narrator().enter();
    story.narrator().leave();  // its work is done; its release comes next
    // Dies at the story's step point, before anything is sent: the Actor narrates the crash.
    (void)a_lock->release();
    story.die("A's release went through: it never reached {}", story.window());
  });
  a->join();
  story.say_claiming({claim::before(claim::last("A", {{"kind", "leave"}}), claim::death("A")),
                      claim::none("A", {{"command", {"DEL", "EVAL", "EVALSHA"}}})},
                     "A's process died at {}: after it left its critical section, before it sent its release (kill "
                     "-9, a crash); no finally block runs in a process that is gone, so A never releases",
                     story.window());
  const auto left_behind = story.observe([&] { return probe.pttl(config.key); });
  story.say(left_behind == -1 ? "the key has no TTL: only a DEL can free it, and its owner is gone"
                              : "the key carries a lease: the server will free it");

  const auto b = b_tries_after_crash(story, *b_lock, kPatience, probe, config.key,
                                     text("gives up: {} ms of SETNX answered 0", kPatience.count()));
  return story.finish(!b.got_in, b.got_in ? text("the lease freed the crashed holder's lock; B got in after {} ms",
                                                 b.waited_ms)
                                          : text("after {} ms the crashed holder's key still has PTTL -1: every "
                                                 "client waits forever (死锁)",
                                                 b.waited_ms));
}
