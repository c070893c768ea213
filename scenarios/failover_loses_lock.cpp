// Seed 001 §二.5 Redis分布式锁的缺点 and seed 004 §10 优化分布式锁_Redlock算法
// (redis集群状态下的问题, 主从切换): client A's lock is written on the
// master and acknowledged, the master dies before replicating it, the replica
// is promoted without the key, and client B acquires too: two holders. With
// --guard (LockConfig::wait_replicas = 1, Redisson's WAIT after the acquire)
// A's acquire is refused, because no replica acknowledged it, so nobody ends
// up holding a lock the new master has never heard of.
#include "scenario/scenario.h"
#include "scenario/scenario_catalog.h"
#include "servers/proxied_replication.h"

using namespace locklab;
using namespace locklab::harness;
using namespace std::chrono_literals;

namespace {

// A's lock on the master. --guard: Redisson's WAIT after the acquire (wait_replicas = 1).
LockConfig on_master(const redis::ConnectionOptions& master, bool guard) {
  LockConfig config;
  config.key = "lock";
  config.ttl = 5s;  // long: no lease runs out in this story, only the key is lost
  config.servers = {master};
  if (guard) {
    config.wait_replicas = 1;
    config.wait_replicas_timeout = 100ms;
  }
  return config;
}

}  // namespace

int main(int argc, char** argv) {
  Scenario story(scenario_spec("failover_loses_lock"), argc, argv);
  const bool guard = story.flag("guard");
  auto pair = story.must(ProxiedReplication::start(), "master and replica");
  story.say("master {0}, replica {1} replicating through a proxy; the link is in sync",
            pair->master().endpoint().to_string(), pair->replica().endpoint().to_string());
  const LockConfig config = on_master(pair->master().connection_options(), guard);
  auto lock_a = story.make_lock(config);

  pair->hold_replication();
  story.say("the replication stream is held in the proxy: writes reach the master only");
  // took_ms: from A's acquire to its answer; with the guard, WAIT's time is in it.
  const Scenario::Attempt a = story.attempt("A", *lock_a);
  if (!guard && a.outcome != Acquire::acquired) story.die("A could not acquire on the master");
  if (guard && a.outcome == Acquire::acquired) story.die("the guard let A acquire though no replica acknowledged");
  story.say("{} bytes of replication stream held: the replica has not seen them", pair->held_bytes());

  const auto promoted = story.must(pair->fail_over(), "fail over");
  story.say("the master is SIGKILLed, the held bytes die with it, the replica is promoted (REPLICAOF NO ONE)");

  LockConfig on_new_master = config;
  on_new_master.servers = {promoted};
  on_new_master.wait_replicas = 0;  // the promoted master has no replica yet: WAIT could never succeed
  if (guard) story.say("B acquires without the guard: the promoted master has no replica to wait for");
  auto lock_b = story.make_lock(on_new_master);
  const Scenario::Attempt b = story.attempt("B", *lock_b, 0ms, "try_acquire on the new master => {}");
  if (b.outcome != Acquire::acquired) story.die("B could not acquire on the promoted replica");

  const bool two_holders = a.outcome == Acquire::acquired && b.outcome == Acquire::acquired;
  if (two_holders)
    story.say("A still believes it holds the lock, and so does B");
  else
    story.say("only B holds the lock: A was told that its acquire did not count {} ms after it asked (WAIT waited for "
              "a replica, then the hold was undone), before the failover",
              fixed(a.took_ms, 1));
  return story.finish(two_holders, two_holders
                                       ? "the acknowledged write was lost with the master"
                                       : "WAIT 1 got no acknowledgement, so A's hold was undone and refused");
}
