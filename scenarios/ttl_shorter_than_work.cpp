// Seed 004 §5 优化分布式锁_设置过期时间: "如果业务逻辑的执行时间是7s" with a 3 s
// lease, scaled down to a 100 ms lease (setnx-expire's EXPIRE rounds it up to
// 1 s). index1's lease lapses while it works; index2 gets in; index2's lease
// lapses; index3 gets in; index1 finishes and releases — with a blind DEL that
// deletes index3's lock ("导致index3的业务只执行1s就被别人释放"); then index2 and
// index3 finish and release, in the seed's order. Every actor works until the
// next state of the story is reached (polled), never for a guessed time. Who
// deleted whose key is the narrator's (key_ledger.h), from the replies.
//
// The lesson is the wrong-owner delete (误删) that the seed's next section fixes
// with a uuid. lua-safe-delete refuses index1's late release and index3's lock
// survives. What it does not fix is the lease itself: index1, index2 and index3
// are inside together all the same (the timeline shows the overlap); that race
// is watchdog_renewal's and fencing's lesson, not this one's.
#include <atomic>

#include "scenario/claims.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

constexpr auto kTtl = 100ms;  // the seed's 3 s
constexpr auto kPatience = 10s;  // a waiter's bound: many leases long
constexpr std::chrono::milliseconds kLastLease = 1s;  // index3's: nobody waits for it to run out

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("ttl_shorter_than_work"), argc, argv);
  auto [server, probe, config] = story.single_server(kTtl);
  LockConfig index1_config = config;
  index1_config.owner = "index1";
  auto index1 = story.make_lock(index1_config);
  std::atomic<bool> index1_in{false}, index2_in{false}, index3_in{false};
  Release index1_release = Release::error;

  auto first = story.actor("index1", [&] {
    if (index1->try_acquire(0ms) != Acquire::acquired) story.die("{} could not acquire a free lock", "index1");
    story.narrator().enter();
    story.say("its business logic takes longer than its lease");
    index1_in = true;
    if (!wait_until([&] { return index3_in.load(); }, kPatience)) story.die("{} never got in", "index3");
    story.say_claiming({claim::after_lease(claim::this_step(), claim::last("index1", {{"effect", "acquired"}}))},
                       "finishes its work, long after its lease ran out");
    story.narrator().leave();
    index1_release = story.release(*index1);
  });
  story.wait_for("index1 is inside", [&] { return index1_in.load(); });
  const auto lease = story.observe([&] { return probe.pttl(config.key); });
  if (!lease || *lease <= 0) story.die("index1's key has no lease");
  story.say("the lease as the server counts it: {} ms", *lease);

  // The waiters poll a few times per lease: enough to see them wait, few enough to read.
  LockConfig waiter_config = config;
  waiter_config.retry_interval = std::max(std::chrono::milliseconds{*lease / 4}, 10ms);
  waiter_config.owner = "index2";
  auto index2 = story.make_lock(waiter_config);
  waiter_config.owner = "index3";
  // index3's lease only has to outlast index1's release, also on a loaded machine.
  waiter_config.ttl = kLastLease;
  auto index3 = story.make_lock(waiter_config);
  if (*lease < kLastLease.count() / 2)
    story.say("index3 will ask for a {} ms lease: it only has to still hold when index1 releases, also on a "
              "loaded machine (nobody waits for it to run out)",
              kLastLease.count());

  std::atomic<bool> index1_done{false};  // index1 released and the director said what it did
  auto second = story.actor("index2", [&] {
    if (index2->try_acquire(kPatience) != Acquire::acquired) story.die("{} never got in", "index2");
    story.narrator().enter();
    story.say_claiming({claim::after_lease(claim::last("index2", {{"effect", "acquired"}}),
                                           claim::last("index1", {{"effect", "acquired"}})),
                        claim::before(claim::this_step(), claim::next("index1", {{"kind", "leave"}}))},
                       "got in: index1's lease lapsed while index1 still works");
    index2_in = true;
    if (!wait_until([&] { return index1_done.load(); }, kPatience)) story.die("index1 never released");
    // The seed: 3 s later than index1, 7 s of work each.
    story.say_claiming({claim::before(claim::last("index1", {{"kind", "leave"}}), claim::this_step())},
                       "finishes its work, after index1");
    story.narrator().leave();
    story.release(*index2);
  });
  story.wait_for("index2 is inside", [&] { return index2_in.load(); });
  auto third = story.actor("index3", [&] {
    if (index3->try_acquire(kPatience) != Acquire::acquired) story.die("{} never got in", "index3");
    story.narrator().enter();
    story.say_claiming({claim::after_lease(claim::last("index3", {{"effect", "acquired"}}),
                                           claim::last("index2", {{"effect", "acquired"}})),
                        claim::before(claim::this_step(), claim::next("index2", {{"kind", "leave"}}))},
                       "got in: index2's lease lapsed while index2 still works");
    index3_in = true;
  });
  third->join();
  first->join();

  const auto after = story.observe([&] { return probe.pttl(config.key); });
  // index1's release found a key that was not its own (index3's, which outlives it): did it delete it?
  if (index1_release != Release::released && index1_release != Release::not_owner)
    story.die("index1's release found no lock of index3's to delete: {}", to_string(index1_release));
  const bool deleted = index1_release == Release::released && after == -2;
  story.say(deleted ? "index3 still works, but its lock is gone: a fourth client could enter now"
                    : "index3's lock is still there");
  story.say("index1, index2 and index3 were inside at once regardless: the lease ran out under slow holders "
            "(the race watchdog_renewal and gc_pause_fencing address)");
  index1_done = true;
  second->join();  // index2 finishes next, as in the seed
  auto tidy = story.actor("index3", [&] {
    story.say("finishes its work, last");
    story.narrator().leave();
    story.release(*index3);
  });
  tidy->join();
  return story.finish(deleted, deleted ? "index1's blind DEL deleted index3's lock, as in the seed"
                                       : "index1's late release was refused (not its token); index3's lock survived");
}
