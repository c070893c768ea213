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

// Where a generation's release or acquire can be parked or crashed, as its
// capabilities name the point (impls/registry.h): a story never spells it.
std::string release_window(std::string_view lock) {
  return std::string(find_generation(lock)->capabilities.release_window);
}
std::string acquire_gap(std::string_view lock) { return std::string(find_generation(lock)->capabilities.acquire_gap); }

}  // namespace

// Order: the articles' order of lessons (seed 004's sections, then seeds 000/001
// and Kleppmann). A StoryLock's window is the step point where the story parks
// or crashes that generation's client ("" when it needs none); its story, the
// story as told with that lock when the spec's would not be true of it.
//
// Sources cite the articles by their own headings, so that a student finds the
// passage (/work/shared/seeds/, docs/glossary.md): seed 004 numbers its Part2
// sections 1-11 ("6 优化分布式锁_防止误删除"); 000, 001 and 003 use 一、二、… with
// 1、/1）under them, cited §二.2.3. Every story, race and source line here is
// also a key of the message catalog (messages.cpp): its Chinese for --lang zh.
const std::vector<ScenarioSpec>& scenario_catalog() {
  static const std::vector<ScenarioSpec> catalog = {
      {.name = "counter_demo",
       .source = "seed 004 §11 本地锁会出现的问题",
       .story = "100 requests at concurrency 50 increment a counter that starts at 1: expected 101",
       .race = "lost updates: the counter ends below 101",
       .locks = counter_demo_locks()},
      {.name = "setnx_crash_deadlock",
       .source = "seed 004 §4 基于redis分布式锁的基本实现",
       .story = "A takes the lock and its process dies before its release; B waits for the lock",
       .race = "the key has no TTL (PTTL -1): nobody ever gets the lock again (死锁)",
       .locks = {{"setnx", true, release_window("setnx"),
                  "A takes the lock with SETNX and crashes before its DEL; B waits and never gets in"},
                 {"setnx-expire", false, release_window("setnx-expire"),
                  "A takes the lock with SETNX and EXPIRE and crashes before its DEL; the lease frees the key and B "
                  "gets in"},
                 {"lua-safe-delete", false, release_window("lua-safe-delete"),
                  "A takes the lock with SET NX PX and crashes before its release; the lease frees the key and B gets "
                  "in"}}},
      {.name = "setnx_expire_gap",
       .source = "seed 003 §六.1 一些问题; seed 004 §5 优化分布式锁_设置过期时间",
       .story = "A takes the lock and crashes at once (before its EXPIRE, where it has one); B waits for the lock",
       .race = "SETNX and EXPIRE are two commands: the key is left with no TTL, deadlock (缺乏原子性)",
       .locks = {{"setnx-expire", true, acquire_gap("setnx-expire"),
                  "A's SETNX succeeds and A crashes before its EXPIRE; B waits and never gets in"},
                 // one atomic command: A crashes right after acquiring
                 {"set-nx-px-token", false, "",
                  "A's SET NX PX sets the value and the TTL in one command; A crashes right after it, and B gets in "
                  "once the lease ends"}}},
      {.name = "getset_c0_c1_c2",
       .source = "seed 003: the C3/C4 passage before 五、代码实现, and §六.2 一些问题",
       .story = "C0's timestamp has passed; C1 and C2 both GET it and both GETSET: one wins, the loser "
                "overwrites the winner's expiry",
       .race = "the loser's GETSET overwrote the winner's expiry (C1的超时时间被C2覆盖)",
       .locks = {{"getset-timestamp", true, "after-get-before-getset"}}},
      {.name = "getset_clock_skew",
       .source = "seed 003 §五 代码实现 (lock() compares System.currentTimeMillis())",
       .story = "B's wall clock runs ahead: it reads A's live timestamp as expired and GETSETs the lock",
       .race = "B steals A's live lock: two holders (the expiry is judged by client clocks)",
       .locks = {{"getset-timestamp", true, ""}, {"lua-safe-delete", false, ""}}},
      {.name = "ttl_shorter_than_work",
       .source = "seed 004 §5 优化分布式锁_设置过期时间",
       .story = "index1's work outlasts its lease: index2 and then index3 get in, and index1's late release "
                "runs while index3 holds",
       .race = "index1's late DEL removes index3's lock (误删)",
       .locks = {{"setnx-expire", true, ""}, {"lua-safe-delete", false, ""}}},
      {.name = "check_then_delete_race",
       .source = "seed 004 §6 优化分布式锁_防止误删除",
       .story = "index1 checks that the lock is its own, the lock expires, index2 takes it, index1 deletes",
       .race = "index1 deletes index2's lock (误删)",
       .locks = {{"set-nx-px-token", true, release_window("set-nx-px-token")},
                 {"lua-safe-delete", false, release_window("lua-safe-delete")}}},
      {.name = "lua_delete_fixes_it",
       .source = "seed 004 §7 优化分布式锁_LUA脚本保证删除的原子性",
       .story = "check_then_delete_race again with the compare-and-delete in one Lua script",
       .race = "index1 deletes index2's lock (误删)",
       .locks = {{"lua-safe-delete", false, release_window("lua-safe-delete")},
                 {"set-nx-px-token", true, release_window("set-nx-px-token")}}},
      {.name = "reentrancy",
       .source = "seed 004 §8 优化分布式锁_可以重入",
       .story = "the holder calls a method that takes the same lock again (testLock -> testSubLock)",
       .race = "the nested call waits for a lock its own caller holds: not reentrant (不可重入)",
       .locks = {{"lua-safe-delete", true, ""}, {"reentrant-watchdog", false, ""}}},
      {.name = "watchdog_renewal",
       .source = "seed 004 §9 优化分布式锁_自动续期; seed 000 §二.2.3 加鎖成功之后的鎖續約",
       .story = "A works longer than its 600 ms lease; B tries to get in",
       .race = "the lease lapses under A, B acquires: two holders (锁续期 stops with the process)",
       .locks = {{"lua-safe-delete", true, "",
                  "A works longer than its 600 ms lease and nothing renews it (no watchdog); B tries to get in"},
                 {"reentrant-watchdog", false, "",
                  "A works longer than its 600 ms lease; its watchdog renews the lease every 200 ms; B tries to get "
                  "in"}},
       .flags = {{"sigstop", "SIGSTOP A's whole process while it works (a GC pause, a frozen VM)", true,
                  "then A's whole process is SIGSTOPped (a GC pause, a frozen VM)"}}},
      {.name = "pubsub_wakeup",
       .source = "seed 000 §二.2.5 鎖競爭（其他線程加鎖失敗）",
       .story = "W1 and W2 wait while H holds the lock; H releases",
       .race = "the waiters learn of the release only by polling again (no unlock message)",
       .locks = {{"lua-safe-delete", true, ""}, {"reentrant-watchdog", false, ""}},
       // Not a race: the lesson is how a waiter learns of a release.
       .words = {.shown = "polling shown",
                 .holds = "wake-up shown",
                 .happened = "observed",
                 .not_happened = "the waiters were woken by the unlock message",
                 .expects = "polling",
                 .expects_not = "a wake-up by the unlock message"}},
      {.name = "failover_loses_lock",
       .source = "seed 001 §二.5 Redis分布式锁的缺点; seed 004 §10 优化分布式锁_Redlock算法",
       .story = "A locks on the master, the master dies before replicating, the replica is promoted, B locks",
       .race = "A and B both hold the lock after the failover (主从切换)",
       .locks = {{"reentrant-watchdog", true, ""}, {"lua-safe-delete", true, ""}},
       .flags = {{"guard", "WAIT for 1 replica after acquiring (LockConfig::wait_replicas = 1)", false,
                  "with the guard A's acquire waits for a replica (WAIT 1 100), gets none, and is undone"}}},
      {.name = "redlock_minority_down",
       .source = "seed 004 §10 优化分布式锁_Redlock算法",
       .story = "5 masters N1-N5, 2 crash; A still gets 3 of 5 votes, B is refused until A releases",
       .race = "B acquires beside A: two holders",
       .locks = {{"redlock", false, ""}}},
      {.name = "redlock_restart_without_persistence",
       .source = "seed 004 §10 优化分布式锁_Redlock算法; redis.io distlock, crash-recovery",
       .story = "client A holds on nodes N1, N2, N3; N3 crashes and comes back empty; client Z asks all five",
       .race = "Z acquires while A's validity lasts: two holders",
       .locks = {{"redlock", true, ""}},
       .flags = {{"delayed-restart", "keep N3 down for longer than the TTL before it restarts", false,
                  "with the delayed restart N3 stays down until A's validity is over"}}},
      {.name = "gc_pause_fencing",
       .source = "Kleppmann 2016, \"How to do distributed locking\" (not in the seeds; seed 004 §9 "
                 "优化分布式锁_自动续期 poses the problem)",
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
