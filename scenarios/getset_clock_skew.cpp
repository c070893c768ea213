// Seed 003's GETSET lock (五、代码实现, its lock(); 六、一些问题 2) judges
// "expired" by comparing the stored timestamp with the client's own
// System.currentTimeMillis(): correctness rests on every client's clock agreeing. B's wall clock runs a minute ahead (LockConfig::clock):
// it reads A's live timestamp as long passed, GETSETs, gets back exactly the
// stamp it read and believes it won — while A is still inside. A's release is
// a blind DEL (seed 003's unlock()): it deletes B's lock (误删), and B's own
// release then finds nothing. lua-safe-delete's lease is counted by the server
// (SET ... PX): B's clock is never consulted.
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

constexpr auto kLease = 10s;    // A's lock is plainly alive for the whole story
constexpr auto kSkew = 60s;     // B's clock is ahead by more than the lease

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("getset_clock_skew"), argc, argv);
  auto [server, probe, config] = story.single_server(kLease);
  LockConfig a_config = config, b_config = config;
  a_config.owner = "A";
  b_config.owner = "B";
  b_config.clock = std::make_shared<const SkewedClock>(kSkew);
  auto a_lock = story.make_lock(a_config);
  auto b_lock = story.make_lock(b_config);

  auto a = story.actor("A", [&] {
    if (a_lock->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "A");
    story.narrator().enter();
    story.say("works; its lock is good for another {} s by A's clock", kLease.count());
  });
  a->join();
  story.say("B's wall clock is {} s ahead of A's and of the server's", kSkew.count());

  bool b_got_in = false;
  auto b = story.actor("B", [&] {
    b_got_in = b_lock->try_acquire(0ms) == Acquire::acquired;
    if (b_got_in) {
      story.narrator().enter();
      story.say("believes it holds the lock");
    } else {
      story.say("finds the lock busy and backs off");
    }
  });
  b->join();
  const auto lease_left = story.observe([&] { return probe.pttl(config.key); });
  if (lease_left == -2) story.die("A's key vanished");

  // A finishes first and releases whatever the generation lets it; then B, if it got in.
  auto a_ends = story.actor("A", [&] {
    story.narrator().leave();
    story.release(*a_lock);
  });
  a_ends->join();
  if (b_got_in)
    story.actor("B", [&] {
      story.narrator().leave();
      story.release(*b_lock);
    })->join();
  return story.finish(b_got_in, b_got_in ? "B judged A's live timestamp expired by its own clock and took the lock "
                                           "while A was inside"
                                         : "the server counts the lease; B's clock never entered the decision");
}
