#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): node-redisson 1.0.4 on the first server, a port of Redisson's
// RLock with its watchdog, as its README runs it (README.md, "Usage"): its own two ioredis connections
// (commands, subscriber) at ioredis's defaults, host and port only. Calls: new Redisson({redis: {options},
// lockWatchdogTimeout: BigInt(ttl)}) (the harness's ttl through the library's own option: the watchdog's
// lease), redisson.getLock(key), lock.tryLock(wait_ms, true) (the harness's wait; true: no lease, the
// watchdog keeps it), lock.unlock(). Only the public API (dist/Redisson.d.ts: `redis`, `getLock`): the
// private `commandExecutor` is not read. tryLock is bounded by its own wait, so it is not bounded here:
// a tryLock that blocks past wait_ms (ioredis queues a command while it reconnects) is the library's.
// What the source says (node_modules/node-redisson/dist/):
// - the key is a hash {owner id: hold count} (Redisson's); acquire is one script (EXISTS or
//   HEXISTS ours, then HINCRBY and PEXPIRE, else PTTL; CommandExecutor.js:11-20): reentrant.
// - tryLock waits on the channel redisson_lock__channel:{key} for the unlock message "0", at most
//   the holder's remaining ttl, and gives up when that wait times out even with wait_ms left
//   (RedissonLock.js:41-49).
// - the watchdog renews every lockWatchdogTimeout / 3 (HEXISTS ours then PEXPIRE, one script);
//   a renewal that finds the lock gone stops it silently, one that fails on a Redis error only
//   logs to stderr and stops it too (RedissonBaseLock.js:56-84): the library reports no loss.
// - unlock is a script (HINCRBY -1, then PEXPIRE or DEL + PUBLISH) followed by a DEL of its latch
//   key; it returns nothing and throws "not locked by current client" when our field is gone
//   (another holder or no key). The adapter counts its own holds to tell still_held from released.
// - the watchdog timeout is per Redisson instance: the lease is init's ttl_ms, acquire's ttl_ms is ignored.
const {serve, library, quiet, withinWait} = require('../kits/js/protocol');
const {Redisson} = library('node-redisson');

let lock = null;
let depth = 0;  // our holds not yet released (the hash's count, as far as we know)

serve({
  library: 'node-redisson',
  capabilities: {expires: true, owner_checked_release: true, reentrant: true, fencing: false,
                 multi_node: false, notifies_waiters: true, auto_extends: true},
  async init(m) {
    const options = {host: m.servers[0].host, port: m.servers[0].port};
    const redisson = new Redisson({redis: {options}, lockWatchdogTimeout: BigInt(m.ttl_ms)});
    quiet(redisson.redis);  // the subscriber's errors go to console.error: the kit's `log` events
    lock = redisson.getLock(m.key);
  },
  async acquire(m) {  // tryLock bounds its own wait; a call stuck past it (ioredis's offline queue) is `blocked`
    const giveBack = (won) => won && lock.unlock().catch(() => {});  // won after the kit answered `unknown`
    const got = await withinWait(m, lock.tryLock(m.wait_ms, true), giveBack);
    if (got.blocked) return got.blocked;
    if (!got.value) return 'timed_out';
    depth += 1;
    return 'acquired';
  },
  async release() {
    try {
      await lock.unlock();
    } catch (error) {
      if (!/not locked by current client/.test(error.message)) throw error;  // `error` (the kit, protocol.js)
      depth = 0;
      return {outcome: 'not_owner', error: error.message.split('\n')[0]};
    }
    depth = Math.max(depth - 1, 0);
    return depth > 0 ? 'still_held' : 'released';
  },
});
