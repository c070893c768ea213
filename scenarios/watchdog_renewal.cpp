// Seed 004 §9 优化分布式锁_自动续期 and seed 000 §二.2.3 鎖續約（看門狗機制）
// (看门狗, 锁续期): holder A's work outlasts its lease. With lua-safe-delete there is no watchdog: the lease lapses under the
// slow holder and B gets in while A still works. With reentrant-watchdog, A's
// watchdog re-arms the key every ttl/3 (its PEXPIRE script in A's background
// lane, the PTTL rising again below), so B is refused however long A works.
// With --sigstop A's whole process is then SIGSTOPped, as a long GC pause or a
// frozen VM would stop it: the watchdog stops with it, the lease lapses, and B
// gets in while A still believes it holds the lock.
#include <atomic>
#include <cstdlib>

#include "scenario/claims.h"
#include "scenario/lease_watch.h"
#include "scenario/process_actor.h"
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "support/process_control.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

constexpr auto kLease = 600ms;  // the watchdog renews every 200 ms

// A is a process of its own: SIGSTOP must freeze its watchdog too. It takes the
// lock, works until the parent tells it its work ends, then releases.
std::unique_ptr<ProcessActor> fork_a(Scenario& story, const LockConfig& config, bool watchdog) {
  return story.must(ProcessActor::start(story.narrator(), "A",
                                        [&story, &config, watchdog](ProcessActor::Child& me) {
                                          auto lock = story.make_lock(config);
                                          if (lock->try_acquire(0ms) != Acquire::acquired) std::_Exit(3);
                                          me.enter();
                                          me.say("works; the work takes longer than the {} ms lease",
                                                 kLease.count());
                                          me.tell_parent();
                                          me.wait_for_parent();
                                          me.leave();
                                          const Release released = lock->release();
                                          const std::string_view outcome = translated(to_string(released));
                                          if (watchdog)
                                            me.say("releases => {}; its watchdog found the lease lost {} time(s)",
                                                   outcome, lock->leases_lost());
                                          else
                                            me.say("releases => {}", outcome);
                                        }),
                    "fork A");
}

// The watchdog kept A's lease: B, trying meanwhile, is refused. Without --sigstop the
// story ends here (its exit code); with it, it goes on to the stop.
std::optional<int> tell_renewal(Scenario& story, ProcessActor& a, DistributedLock& lock_b, bool renewed) {
  if (!renewed) story.die("the watchdog did not keep the slow holder's lease");
  bool early = false;
  story.actor("B", [&] {
    early = lock_b.try_acquire(0ms) == Acquire::acquired;
    story.say_claiming({claim::inside("A")}, "try_acquire => {} while A works on",
                       translated(early ? "acquired" : "refused"));
  })->join();
  if (early) return story.finish(true, "B got in although A's watchdog was renewing");
  if (story.flag("sigstop")) return std::nullopt;
  a.tell_child();  // A's work ends
  if (a.join() != 0) story.die("A did not finish its story");
  return story.finish(false, "A's watchdog renewed the lease every 200 ms while A worked; B was refused");
}

// A's lease lapses (A SIGSTOPped, or nothing renews it): B gets in while A still
// works, two holders; then A is let go (SIGCONT) and finishes.
int tell_two_holders(Scenario& story, ProcessActor& a, DistributedLock& lock_b, RedisProbe& probe,
                     const std::string& key, bool watchdog) {
  std::optional<PausedProcess> frozen;
  if (story.flag("sigstop")) {
    frozen.emplace(story.must(PausedProcess::pause(a.pid()), "SIGSTOP A"));
    story.say(watchdog ? "SIGSTOP A (pid {}): every thread of A stops, its watchdog too"
                       : "SIGSTOP A (pid {}): every thread of A stops",
              a.pid());
    story.wait_for("A's key expired", probe.key_absent(key));
  }
  // B acquires and releases on one thread: generation 5's owner is client id + thread.
  std::atomic<bool> b_tried{false}, b_holds{false}, a_finished{false};
  auto b = story.actor("B", [&] {
    b_holds = lock_b.try_acquire(0ms) == Acquire::acquired;
    if (b_holds) story.narrator().enter();
    b_tried = true;
    if (!b_holds) return;
    wait_until([&] { return a_finished.load(); }, 20s);
    story.narrator().leave();
    story.release(lock_b, "releases => {}");
  });
  if (!wait_until([&] { return b_tried.load(); }, 10s) || !b_holds) story.die("{} could not take the expired lock", "B");
  story.say("A is still inside its critical section: two holders");
  if (frozen) {
    story.say("SIGCONT A: it carries on as if nothing happened");
    frozen->resume();
  }
  a.tell_child();  // A's work ends
  if (a.join() != 0) story.die("A did not finish its story");
  a_finished = true;
  b->join();
  return story.finish(b_holds, watchdog ? text("the watchdog renewed A's lease while A ran, and stopped when A stopped")
                                        : text("a fixed lease ran out under a slow holder, paused or not"));
}

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("watchdog_renewal"), argc, argv);
  const bool watchdog = story.capabilities().auto_extends;
  auto [server, probe, config] = story.single_server(kLease);
  auto a = fork_a(story, config, watchdog);
  if (!a->wait_for_child()) story.die("A never acquired the free lock");
  auto lock_b = story.make_lock(config);
  const bool renewed = watch_renewals(story, probe, config.key, kLease, 3);
  if (!watchdog)
    story.say("no watchdog: nothing renewed the lease while A was still working");
  else if (const auto told = tell_renewal(story, *a, *lock_b, renewed))
    return *told;
  return tell_two_holders(story, *a, *lock_b, probe, config.key, watchdog);
}
