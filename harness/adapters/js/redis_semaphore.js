#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): redis-semaphore 5.8.0's Mutex on the first server (ioredis).
// Calls: new Mutex(client, key, {lockTimeout, acquireTimeout, acquireAttemptsLimit, retryInterval,
// onLockLost}), mutex.tryAcquire(), mutex.release(), mutex.isAcquired.
// What the source says (node_modules/redis-semaphore/lib/):
// - the key is "mutex:" + key; acquire is SET key id PX lockTimeout NX, every retryInterval while
//   Date.now() < start + acquireTimeout (mutex/acquire.js): acquireTimeout 0 makes no attempt at
//   all, so wait_ms 0 is acquireAttemptsLimit 1 here.
// - after acquiring, a timer refreshes every 0.8 x lockTimeout (Lock.js:48) with a script (GET ==
//   id then PEXPIRE, mutex/refresh.js); a refresh that finds the key gone calls onLockLost (the
//   adapter's `lost`) and marks the mutex not acquired; one that fails on a Redis error rejects
//   unhandled (Lock.js:52-75 has try/finally, no catch) and the timer goes on.
// - release() ignores its script's result (GET == id then DEL, mutex/release.js): it cannot say
//   not_owner. It sends nothing when the mutex is not acquired (Lock.js:149): after a lost lock.
// - there is no public extend: the refresh is the library's own.
// Defaults (docs/peers.md, "Defaults and variants"): ioredis at its defaults (the README's `new
// Redis()`): a command to a dead server waits in the offline queue for about 73 s (protocol.js,
// IOREDIS_FAIL_FAST), so a release or a tryAcquire to it blocks past the kit's bound (liveness),
// and a refresh's rejection comes only after that, later than any run here. Node's default for
// the unhandled rejection (the process dies: a crashed client) then applies.
// The wait: acquireTimeout is wait_ms and retryInterval retry_ms (the library's own options, no
// jitter); the kit bounds the call (withinWait): a lock won in the 1 s grace after wait_ms is kept
// (acquired), as in every kit; one won after `unknown` is released.
const {serve, library, event, quiet, connected, withinWait, retryMs} = require('../kits/js/protocol');
const Redis = library('ioredis');
const {Mutex} = library('redis-semaphore');

let client = null;
let key = '';
let mutex = null;  // the Mutex of the last acquire: one per acquisition, its lease set at creation

serve({
  library: 'redis-semaphore',
  capabilities: {expires: true, owner_checked_release: true, reentrant: false, fencing: false,
                 multi_node: false, notifies_waiters: false, auto_extends: true},
  async init(m) {
    client = quiet(new Redis({host: m.servers[0].host, port: m.servers[0].port}));
    await connected(client);
    key = m.key;
  },
  async acquire(m) {  // a Redis error rejects: `unknown` (the kit, protocol.js)
    const candidate = new Mutex(client, key, {
      lockTimeout: m.ttl_ms, acquireTimeout: m.wait_ms > 0 ? m.wait_ms : 1000,
      acquireAttemptsLimit: m.wait_ms > 0 ? Infinity : 1, retryInterval: retryMs(m),
      onLockLost: () => event('lost'),
    });
    const giveBack = (acquired) => acquired && candidate.release().catch(() => {});  // won after `unknown`
    const got = await withinWait(m, candidate.tryAcquire(), giveBack);
    if (got.blocked) return got.blocked;
    if (!got.value) return 'timed_out';
    mutex = candidate;
    return 'acquired';
  },
  async release() {
    const held = mutex;
    mutex = null;
    if (!held || !held.isAcquired) {
      return {outcome: 'already_expired', error: held ? 'the library reported the lock lost' : 'no hold to release'};
    }
    await held.release();  // a Redis error throws: `error` (the kit, protocol.js)
    return 'released';
  },
});
