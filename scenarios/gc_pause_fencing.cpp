// Kleppmann, "How to do distributed locking" (2016; not in the seeds, which
// pose the problem in seed 004 §9 优化分布式锁_自动续期): client 1 takes the lock
// and reads the counter, then stops for a long GC pause; its lease runs out,
// client 2 takes the lock (fencing token 34), reads and writes; client 1 wakes
// and writes what it computed before the pause, with token 33. With fenced
// (generation 7) the resource has already seen token 34 and refuses the stale
// write; with lua-safe-delete the late write lands over client 2's: a lost update.
#include "redis/link.h"

#include "g7_fenced.h"

#include "resource/counter_resource.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "scenario/step_gate.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

std::string token_text(std::optional<std::uint64_t> token) {
  return token ? text("token {}", *token) : text("no token");
}

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("gc_pause_fencing"), argc, argv);
  auto [server, probe, config] = story.single_server(100ms);
  // Kleppmann's figure numbers the tokens 33 and 34: start the fence counter at 32.
  redis::Link setup(server->connection_options());
  story.must(setup.command({"SET", FencedLock::fence_key_for(config.key), "32"}), "preset the fence counter");
  const bool fenced = story.capabilities().fencing;
  if (fenced)
    story.say("the fence counter {} is preset to 32, so that the tokens are 33 and 34 as in Kleppmann's figure",
              FencedLock::fence_key_for(config.key));

  StepGate pause(story.window());
  auto client1 = story.make_lock(config);
  auto client2 = story.make_lock(config);
  CounterResource resource1(server->connection_options(), "counter");
  CounterResource resource2(server->connection_options(), "counter");

  bool late_write_landed = false;
  auto one = story.actor("client1", [&] {
    if (client1->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "client1");
    story.narrator().enter();
    const auto token = client1->fencing_token();
    const auto read = story.must(resource1.read(token), "client {} reads", 1);
    story.say("read {} with {}; a GC pause begins", read.value, token_text(token));
    pause.hook()(story.window());  // the pause: parked until the director lets it go
    story.say("wakes up, still believing it holds the lock; writes {}", read.value + 1);
    late_write_landed = story.must(resource1.write(read.value + 1, token), "client {} writes", 1);
    story.say(late_write_landed ? "the write landed" : "the resource refused the write: its token is stale");
    story.narrator().leave();
  });
  if (!pause.wait_arrival()) story.die("client 1 never paused");
  story.wait_for("client 1's lease expired", probe.key_absent(config.key));

  auto two = story.actor("client2", [&] {
    if (client2->try_acquire(0ms) != Acquire::acquired) story.die("{} could not take the expired lock", "client2");
    story.narrator().enter();
    const auto token = client2->fencing_token();
    const auto read = story.must(resource2.read(token), "client {} reads", 2);
    if (!story.must(resource2.write(read.value + 1, token), "client {} writes", 2))
      story.die("the resource refused the current holder");
    story.say("read {}, wrote {} with {}", read.value, read.value + 1, token_text(token));
    story.narrator().leave();
    story.release(*client2, "releases => {}");
  });
  two->join();
  pause.open();
  one->join();

  const long long counter = story.must(resource1.value(), "read the counter");
  story.say(late_write_landed ? "two increments were made under the lock; the counter reads {}"
                              : "one increment landed (client 2's), the stale one was refused; the counter reads {}",
            counter);
  if (!fenced && !late_write_landed) story.die("the unfenced write was refused");
  return story.finish(late_write_landed,
                      late_write_landed ? text("the counter lost client 2's increment (expected 2, got {})", counter)
                                        : text("the stale token 33 was refused after the resource saw 34; client 2's "
                                               "write stands and client 1 knows its update did not happen"));
}
