#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): simple-redis-mutex 3.0.0 on the first server, with node-redis 5.
// Calls: tryLock(client, key, {timeout}) for wait_ms 0, else lock(client, key, {timeout, pollingInterval}) (no
// failAfter: below); release(), release.refreshTimeout() for `extend`, release.fencingToken (acquire_ok's).
// What the source says (node_modules/simple-redis-mutex/dist/index.js):
// - the key is "@simple-redis-mutex:lock-" + key, its value Math.random(); tryLock is SET NX PX, then, once
//   held, INCR of one global counter for the fencing token (lines 103-155): it orders INCRs, not holds.
// - lock() tries at once, on every release message and every pollingInterval (RETRY_MS here), not waiting
//   for the attempt before; failAfter rejects it. Attempts' rejections are not caught (line 57): a Redis
//   error is an unhandled rejection (event `unhandled`), lock() waits on, the acquire is `unknown`. An
//   attempt in flight when lock() settled (a win, failAfter) can still win if the key vanished meanwhile,
//   its release dropped (line 61): a lock nobody holds until expiry. So no failAfter, one lock() out at a
//   time (waitForLock): its win goes to the waiting acquire or, if that timed out, is kept for the next
//   acquire for one wait (at most 100 ms), then given back: under load a win's INCR took a whole 30 ms
//   wait, and handed straight back every win fell between two acquires, as no service on lock() sees.
// - release is a script (GET == value then DEL and PUBLISH) whose result is not returned: it cannot
//   say not_owner. refreshTimeout is GET, then PEXPIRE if ours, resolving the same either way.
const {createClient} = require('redis');
const {lock, tryLock} = require('simple-redis-mutex');
const {serve, bounded, quiet, connected, unhandledSoFar, NODE_REDIS_FAIL_FAST, RETRY_MS, GRACE_MS, LATE} = require('./protocol');

let client = null, key = '', release = null;  // release: the last acquire's release function
let pending = null;  // the one lock() out: it waits (release messages, polls) until it wins
let want = null, kept = null;  // pending's win: to the acquire waiting (want), else kept ({won, timer})

function waitForLock(ttl, wait) {
  pending = pending || lock(client, key, {timeout: ttl, pollingInterval: RETRY_MS}).then((won) => {
    pending = null;
    if (want) return want(won);
    kept = {won, timer: setTimeout(() => { kept = null; won().catch(() => {}); }, Math.min(wait, 100))};
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => { want = null; resolve(null); }, wait);
    want = (won) => { clearTimeout(timer); want = null; resolve(won); };
  });
}

async function take(m) {  // a release function, or null when the wait ran out
  if (kept) { clearTimeout(kept.timer); const {won} = kept; kept = null; return won; }
  if (m.wait_ms > 0) return waitForLock(m.ttl_ms, m.wait_ms);
  const [acquired, releaseFn] = await tryLock(client, key, {timeout: m.ttl_ms});
  return acquired ? releaseFn : null;
}

serve({
  library: 'simple-redis-mutex',
  capabilities: {expires: true, owner_checked_release: true, reentrant: false, fencing: true,
                 multi_node: false, notifies_waiters: true, auto_extends: false},
  async init(m) {
    client = quiet(createClient({socket: {host: m.servers[0].host, port: m.servers[0].port}, ...NODE_REDIS_FAIL_FAST}));
    client.connect().catch(() => {});
    await connected(client);
    key = m.key;  // the library subscribes (a second connection) on its first tryLock: here, not in a run's wait
    const [warm, done] = await tryLock(client, `${key}:locklab-warmup`, {timeout: 1000}); if (warm) await done();
  },
  async acquire(m) {
    const before = unhandledSoFar();
    const got = await bounded(take(m), m.wait_ms + GRACE_MS, (late) => late && late().catch(() => {}));
    if (got === LATE) return {outcome: 'unknown', error: `the library still waiting ${GRACE_MS} ms after wait_ms`};
    if (got) {
      release = got;
      return {outcome: 'acquired', fencing_token: got.fencingToken};
    }
    if (unhandledSoFar() > before) return {outcome: 'unknown', error: 'an attempt failed on a Redis error'};
    return 'timed_out';
  },
  async release() {
    const held = release; release = null;
    if (!held) return {outcome: 'already_expired', error: 'no hold to release'};
    await held();  // a Redis error throws: `error` (protocol.js)
    return 'released';
  },
  async extend() {
    if (!release) return {outcome: 'not_owner', error: 'no hold to extend'};
    await release.refreshTimeout();  // back to the acquire's ttl, not ttl_ms; resolves alike if the lock was gone
    return 'extended';
  },
});
