// Seed 003 六、一些问题 1 ("假如在setnx后，redis崩溃了，expire就没有执行，结果就是死锁了")
// and seed 004 §5 优化分布式锁_设置过期时间 ("通过expire设置过期时间（缺乏原子性）"): A's SETNX succeeds, A
// crashes before its EXPIRE, the key never expires and B never gets in.
// set-nx-px-token sets value and TTL in one command: there is no gap to crash
// in, so A crashes right after acquiring and the lease frees the key for B.
#include "scenario/claims.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "scenario/step_gate.h"
#include "scenario/story_stages.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

// B's patience: longer than the EXPIRE 1 the crashed client would have set,
// so only a key without a TTL keeps B out.
constexpr auto kPatience = 1500ms;

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("setnx_expire_gap"), argc, argv);
  // An empty window: one atomic command, no gap inside acquire; A dies right after it.
  // Retrying every 250 ms: a few narrated retries, not hundreds.
  auto [server, probe, config, a_lock, b_lock] =
      contenders(story, 100ms, 250ms, story.window().empty() ? StepHook{} : crash_at(story.window()));

  auto a = story.actor("A", [&] {
    if (a_lock->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "A");
    if (!story.window().empty()) story.die("A acquired without reaching {}", story.window());
    story.say_claiming({claim::before(claim::last("A", {{"effect", "acquired"}}), claim::death("A"))},
                       "acquired with one command: value and TTL are set together, A dies only now");
    throw SimulatedCrash("after-acquire");
  });
  a->join();
  const auto left_behind = story.observe([&] { return probe.pttl(config.key); });
  if (left_behind == -2) story.die("A crashed without leaving a key");
  story.say(left_behind == -1 ? "SETNX happened, EXPIRE never did: the key has no TTL"
                              : "the key carries its lease from the start");

  const auto b = b_tries_after_crash(story, *b_lock, kPatience, probe, config.key,
                                     text("gives up after {} ms", kPatience.count()));
  return story.finish(!b.got_in, b.got_in ? text("the key expired on the server; B got in after {} ms", b.waited_ms)
                                          : text("after {} ms the key still has PTTL -1: deadlock (死锁)", b.waited_ms));
}
