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
const {serve, library, event, bounded, quiet, connected, IOREDIS_FAIL_FAST, retryMs, GRACE_MS, LATE} = require('../kits/js/protocol');
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
    client = quiet(new Redis({host: m.servers[0].host, port: m.servers[0].port, ...IOREDIS_FAIL_FAST}));
    await connected(client);
    key = m.key;
  },
  async acquire(m) {  // a Redis error rejects: `unknown` (the kit, protocol.js)
    const candidate = new Mutex(client, key, {
      lockTimeout: m.ttl_ms, acquireTimeout: m.wait_ms > 0 ? m.wait_ms : 1000,
      acquireAttemptsLimit: m.wait_ms > 0 ? Infinity : 1, retryInterval: retryMs(m),
      onLockLost: () => event('lost'),
    });
    const got = await bounded(candidate.tryAcquire(), m.wait_ms + GRACE_MS,
                              (acquired) => acquired && candidate.release().catch(() => {}));
    if (got === LATE) return {outcome: 'unknown', error: `tryAcquire() still waiting ${GRACE_MS} ms after wait_ms`};
    if (!got) return 'timed_out';
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
