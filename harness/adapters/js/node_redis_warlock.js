#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): node-redis-warlock 1.0.2 on the first server, with node-redis 3
// (npm alias redis3: the callback API it calls, set(..., cb) and evalsha(..., cb)).
// Calls: warlock(client), warlock.lock(key, ttl, cb) -> (err, unlock, id), unlock(cb),
// warlock.touch(key, id, ttl) for `extend`.
// What the source says (node_modules/node-redis-warlock/lib/):
// - the key is key + ":lock", its value a v1 UUID; acquire is SET PX NX (warlock.js:20-42).
//   optimistic() retries lock() up to maxAttempts but hands back only unlock, not the id that
//   touch() needs, so the adapter runs the same loop itself: lock() every retry_ms (the request's, else 5) until wait_ms.
// - unlock is a script (GET == id then DEL) answering 1 or 0 (0: another value or no key); touch
//   a script (GET == id then SET PX XX) answering OK or 0.
// - both run through node-redis-script, which returns undefined when EVALSHA fails with anything
//   but NOSCRIPT (node-redis-script/src/index.js:24-39): a Redis error is not reported; the
//   adapter reads undefined as `error`.
// - node-redis 3 queues a command while it reconnects (enable_offline_queue, default true), for up
//   to an hour (connect_timeout): the row runs the client at its defaults (the README's
//   redis.createClient(port, host)), so a command to a dead server blocks past the kit's bound:
//   `unknown` with blocked_ms (liveness); a lock that comes later is unlocked.
// The wait: warlock.lock() is one attempt; its README's optimistic() loop is the adapter's poll(),
// every retry_ms until wait_ms, bounded by the kit (withinWait): an attempt won in the 1 s grace after
// wait_ms is kept (acquired), as in every kit.
// - warlock.lock() calls the deprecated new Buffer(): its warning would go to locklab's stderr.
process.noDeprecation = true;
const {serve, library, quiet, connected, withinWait, retryMs} = require('../kits/js/protocol');
const redis = library('redis3');
const Warlock = library('node-redis-warlock');

let warlock = null;
let key = '';
let held = null;  // {unlock, id} of the last acquire

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const attempt = (ttl) => new Promise((resolve, reject) => {
  warlock.lock(key, ttl, (error, unlock, id) => (error ? reject(error) : resolve(unlock && {unlock, id})));
});
async function poll(m) {  // {unlock, id}, or false when wait_ms ran out; a Redis error rejects
  for (const end = Date.now() + m.wait_ms; ; await sleep(retryMs(m))) {
    const got = await attempt(m.ttl_ms);
    if (got || Date.now() + retryMs(m) > end) return got;
  }
}

serve({
  library: 'node-redis-warlock',
  capabilities: {expires: true, owner_checked_release: true, reentrant: false, fencing: false,
                 multi_node: false, notifies_waiters: false, auto_extends: false},
  async init(m) {
    const client = quiet(redis.createClient({host: m.servers[0].host, port: m.servers[0].port}));
    await connected(client);
    warlock = Warlock(client);
    key = m.key;
  },
  async acquire(m) {  // a Redis error rejects: `unknown` (the kit, protocol.js)
    // A win after `unknown` is unlocked, awaited: the end of stdin waits for the unlock to be sent.
    const giveBack = (late) => late && new Promise((resolve) => late.unlock(() => resolve()));
    const got = await withinWait(m, poll(m), giveBack);
    if (got.blocked) return got.blocked;
    if (!got.value) return 'timed_out';
    held = got.value;
    return 'acquired';
  },
  async release() {
    const mine = held;
    held = null;
    if (!mine) return {outcome: 'already_expired', error: 'no hold to release'};
    const result = await new Promise((resolve, reject) => mine.unlock((e, r) => (e ? reject(e) : resolve(r))));
    if (result === undefined) return {outcome: 'error', error: 'the unlock script failed (the library hides why)'};
    return result === 1 ? 'released' : {outcome: 'not_owner', error: 'the key holds another value or is gone'};
  },
  async extend(m) {
    if (!held) return {outcome: 'not_owner', error: 'no hold to extend'};
    const result = await warlock.touch(key, held.id, m.ttl_ms);
    if (result === undefined) return {outcome: 'error', error: 'the touch script failed (the library hides why)'};
    return result === 'OK' ? 'extended' : {outcome: 'not_owner', error: 'the key holds another value or is gone'};
  },
});
