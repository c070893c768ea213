#include "scenario/scenario_catalog.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "registry.h"

namespace locklab::harness {
namespace {

// The counter demo runs every generation; lost updates are the lesson for
// those that do not exclude across processes (no lock; a mutex per instance).
std::vector<StoryLock> counter_demo_locks() {
  std::vector<StoryLock> locks;
  for (const auto& generation : generations())
    locks.push_back({generation.name, generation.capabilities.exclusion != Exclusion::across_processes, ""});
  return locks;
}

}  // namespace

// Order: the articles' order of lessons (seed 004's sections, then seeds 000/001
// and Kleppmann). A StoryLock's window is the step point where the story parks
// or crashes that generation's client ("" when it needs none).
const std::vector<ScenarioSpec>& scenario_catalog() {
  static const std::vector<ScenarioSpec> catalog = {
      {.name = "counter_demo",
       .source = "seed 004 §11",
       .story = "100 requests at concurrency 50 increment a counter that starts at 1: expected 101",
       .race = "lost updates: the counter ends below 101",
       .locks = counter_demo_locks()},
      {.name = "setnx_crash_deadlock",
       .source = "seed 004 §4",
       .story = "A takes the lock with SETNX and crashes before its DEL; B waits and never gets in",
       .race = "the key has no TTL (PTTL -1): nobody ever gets the lock again (死锁)",
       .locks = {{"setnx", true, "before-del"},
                 {"setnx-expire", false, "before-del"},
                 {"lua-safe-delete", false, "before-release"}}},
      {.name = "setnx_expire_gap",
       .source = "seed 003 §6.1, seed 004 §5",
       .story = "A's SETNX succeeds and A crashes before its EXPIRE; B waits and never gets in",
       .race = "SETNX and EXPIRE are two commands: the key is left with no TTL, deadlock (缺乏原子性)",
       .locks = {{"setnx-expire", true, "after-setnx-before-expire"},
                 {"set-nx-px-token", false, ""}}},  // one atomic command: A crashes right after acquiring
      {.name = "getset_c0_c1_c2",
       .source = "seed 003 §4, §6.2",
       .story = "C0's timestamp has passed; C1 and C2 both GET it and both GETSET: one wins, the loser "
                "overwrites the winner's expiry",
       .race = "the loser's GETSET overwrote the winner's expiry (C1的超时时间被C2覆盖)",
       .locks = {{"getset-timestamp", true, "after-get-before-getset"}}},
      {.name = "getset_clock_skew",
       .source = "seed 003 §4",
       .story = "B's wall clock runs ahead: it reads A's live timestamp as expired and GETSETs the lock",
       .race = "B steals A's live lock: two holders (the expiry is judged by client clocks)",
       .locks = {{"getset-timestamp", true, ""}, {"lua-safe-delete", false, ""}}},
      {.name = "ttl_shorter_than_work",
       .source = "seed 004 §5",
       .story = "index1's work outlasts its lease: index2 and then index3 get in, and index1's late release "
                "runs while index3 holds",
       .race = "index1's late DEL removes index3's lock (误删)",
       .locks = {{"setnx-expire", true, ""}, {"lua-safe-delete", false, ""}}},
      {.name = "check_then_delete_race",
       .source = "seed 004 §6",
       .story = "index1 checks that the lock is its own, the lock expires, index2 takes it, index1 deletes",
       .race = "index1 deletes index2's lock (误删)",
       .locks = {{"set-nx-px-token", true, "after-get-before-del"}, {"lua-safe-delete", false, "before-release"}}},
      {.name = "lua_delete_fixes_it",
       .source = "seed 004 §7",
       .story = "check_then_delete_race again with the compare-and-delete in one Lua script",
       .race = "index1 deletes index2's lock (误删)",
       .locks = {{"lua-safe-delete", false, "before-release"}, {"set-nx-px-token", true, "after-get-before-del"}}},
      {.name = "reentrancy",
       .source = "seed 004 §8",
       .story = "the holder calls a method that takes the same lock again (testLock -> testSubLock)",
       .race = "the nested acquire of the same owner blocks on its own lock until it times out",
       .locks = {{"lua-safe-delete", true, ""}, {"reentrant-watchdog", false, ""}}},
      {.name = "watchdog_renewal",
       .source = "seed 004 §9, seed 000 §3",
       .story = "A works longer than its lease; the watchdog renews it; then A's process is SIGSTOPped",
       .race = "the lease lapses under A, B acquires: two holders (锁续期 stops with the process)",
       .locks = {{"lua-safe-delete", true, ""}, {"reentrant-watchdog", false, ""}},
       .flags = {{"sigstop", "SIGSTOP A's whole process while it works (a GC pause, a frozen VM)", true}}},
      {.name = "pubsub_wakeup",
       .source = "seed 000 §5",
       .story = "W1 and W2 wait while H holds the lock; H releases",
       .race = "the waiters learn of the release only by polling again (no unlock message)",
       .locks = {{"lua-safe-delete", true, ""}, {"reentrant-watchdog", false, ""}}},
      {.name = "failover_loses_lock",
       .source = "seed 001 §5, seed 004 §10",
       .story = "A locks on the master, the master dies before replicating, the replica is promoted, B locks",
       .race = "A and B both hold the lock after the failover (主从切换)",
       .locks = {{"reentrant-watchdog", true, ""}, {"lua-safe-delete", true, ""}},
       .flags = {{"guard", "WAIT for 1 replica after acquiring (LockConfig::wait_replicas = 1)", false}}},
      {.name = "redlock_minority_down",
       .source = "seed 004 §10 (红锁)",
       .story = "5 masters, 2 crash; A still gets 3 of 5 votes, B is refused",
       .race = "B acquires beside A: two holders",
       .locks = {{"redlock", false, ""}}},
      {.name = "redlock_restart_without_persistence",
       .source = "seed 004 §10 (红锁); redis.io distlock, crash-recovery",
       .story = "A holds on nodes A,B,C; C restarts empty; Z gets C,D,E",
       .race = "Z acquires while A's validity lasts: two holders",
       .locks = {{"redlock", true, ""}},
       .flags = {{"delayed-restart", "keep C down for longer than the TTL before it restarts", false}}},
      {.name = "gc_pause_fencing",
       .source = "Kleppmann 2016 (anchors/faults.md: the paused holder)",
       .story = "client 1 pauses past its lease, client 2 locks and writes, client 1 wakes and writes",
       .race = "client 1's late write lands over client 2's: a lost update",
       .locks = {{"lua-safe-delete", true, "gc-pause"}, {"fenced", false, "gc-pause"}}},
  };
  return catalog;
}

const ScenarioSpec* find_scenario(std::string_view name) {
  for (const auto& spec : scenario_catalog())
    if (spec.name == name) return &spec;
  return nullptr;
}

const ScenarioSpec& scenario_spec(std::string_view name) {
  if (const ScenarioSpec* spec = find_scenario(name)) return *spec;
  std::fprintf(stderr, "%s: not in harness/scenario/scenario_catalog.cpp\n", std::string(name).c_str());
  std::exit(1);
}

}  // namespace locklab::harness
