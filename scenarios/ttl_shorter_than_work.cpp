// Seed 004 §5 优化分布式锁_设置过期时间: "如果业务逻辑的执行时间是7s" with a 3 s lease, scaled down
// to 100 ms (setnx-expire's EXPIRE rounds it up to 1 s). index1's lease lapses while it works;
// index2 gets in; index2's lease lapses; index3 gets in; index1 finishes and releases — with a
// blind DEL that deletes index3's lock ("导致index3的业务只执行1s就被别人释放"); then index2 and
// index3 finish and release, in the seed's order. Every actor works until the next state of the
// story is reached (polled), never for a guessed time. Who deleted whose key is the narrator's
// (key_ledger.h), from the replies. The lesson is the wrong-owner delete (误删) that the seed's
// next section fixes with a uuid: lua-safe-delete refuses index1's late release and index3's
// lock survives. What it does not fix is the lease itself: index1, index2 and index3 are inside
// together all the same (the timeline shows the overlap); watchdog_renewal's and fencing's race.
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

// `who` waits for `lock` and gets in once `previous`'s lease lapsed, `previous` still at work:
// claimed (after `previous`'s lease, before `previous` leaves) for the narration test; then `in`.
void enter_after_lapse(Scenario& story, const std::string& who, DistributedLock& lock, const std::string& previous,
                       std::atomic<bool>& in) {
  if (lock.try_acquire(kPatience) != Acquire::acquired) story.die("{} never got in", who);
  story.narrator().enter();
  story.say_claiming({claim::after_lease(claim::last(who, {{"effect", "acquired"}}),
                                         claim::last(previous, {{"effect", "acquired"}})),
                      claim::before(claim::this_step(), claim::next(previous, {{"kind", "leave"}}))},
                     previous == "index1" ? "got in: index1's lease lapsed while index1 still works"
                                          : "got in: index2's lease lapsed while index2 still works");
  in = true;
}

// index1's release found a key that was not its own (index3's, which outlives it): did it delete it?
bool judge_blind_delete(Scenario& story, Release index1_release, RedisProbe& probe, const std::string& key) {
  const auto pttl_after = story.observe([&] { return probe.pttl(key); });
  if (index1_release != Release::released && index1_release != Release::not_owner)
    story.die("index1's release found no lock of index3's to delete: {}", to_string(index1_release));
  const bool deleted = index1_release == Release::released && pttl_after == -2;
  story.say(deleted ? "index3 still works, but its lock is gone: a fourth client could enter now"
                    : "index3's lock is still there");
  story.say("index1, index2 and index3 were inside at once regardless: the lease ran out under slow holders "
            "(the race watchdog_renewal and gc_pause_fencing address)");
  return deleted;
}

// index2's and index3's locks, made once index1's lease is known (as the server counts it): they
// poll a few times per lease, enough to see them wait, few enough to read.
struct WaiterLocks { std::unique_ptr<DistributedLock> index2, index3; };
WaiterLocks waiter_locks(Scenario& story, RedisProbe& probe, LockConfig config) {
  const auto lease = story.observe([&] { return probe.pttl(config.key); });
  if (!lease || *lease <= 0) story.die("index1's key has no lease");
  story.say("the lease as the server counts it: {} ms", *lease);
  config.retry_interval = std::max(std::chrono::milliseconds{*lease / 4}, 10ms);
  config.owner = "index2";
  auto index2 = story.make_lock(config);
  config.owner = "index3";
  config.ttl = kLastLease;  // it only has to outlast index1's release, also on a loaded machine
  auto index3 = story.make_lock(config);
  if (*lease < kLastLease.count() / 2)
    story.say("index3 will ask for a {} ms lease: it only has to still hold when index1 releases, also on a "
              "loaded machine (nobody waits for it to run out)",
              kLastLease.count());
  return {std::move(index2), std::move(index3)};
}

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
  auto [index2, index3] = waiter_locks(story, probe, config);
  std::atomic<bool> index1_done{false};  // index1 released and the director said what it did
  auto second = story.actor("index2", [&] {
    enter_after_lapse(story, "index2", *index2, "index1", index2_in);
    if (!wait_until([&] { return index1_done.load(); }, kPatience)) story.die("index1 never released");
    // The seed: 3 s later than index1, 7 s of work each.
    story.say_claiming({claim::before(claim::last("index1", {{"kind", "leave"}}), claim::this_step())},
                       "finishes its work, after index1");
    story.narrator().leave();
    story.release(*index2);
  });
  story.wait_for("index2 is inside", [&] { return index2_in.load(); });
  story.actor("index3", [&] { enter_after_lapse(story, "index3", *index3, "index2", index3_in); })->join();
  first->join();
  const bool deleted = judge_blind_delete(story, index1_release, probe, config.key);
  index1_done = true;
  second->join();  // index2 finishes next, as in the seed
  story.actor("index3", [&] {
    story.say("finishes its work, last");
    story.narrator().leave();
    story.release(*index3);
  })->join();
  return story.finish(deleted, deleted ? "index1's blind DEL deleted index3's lock, as in the seed"
                                       : "index1's late release was refused (not its token); index3's lock survived");
}
