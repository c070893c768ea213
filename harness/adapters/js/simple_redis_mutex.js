#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): simple-redis-mutex 3.0.0 on the first server, with node-redis 5.
// Calls: tryLock(client, key, {timeout}) for wait_ms 0, else lock(client, key, {timeout, pollingInterval}) (no
// failAfter: below); release(), release.refreshTimeout() for `extend`, release.fencingToken (acquire_ok's).
// What the source says (node_modules/simple-redis-mutex/dist/index.js):
// - the key is "@simple-redis-mutex:lock-" + key, its value Math.random(); tryLock is SET NX PX, then, once
//   held, INCR of one global counter for the fencing token (lines 103-155): it orders INCRs, not holds.
// - lock() tries at once, on every release message and every pollingInterval (retry_ms), not waiting for the
//   attempt before; failAfter rejects it. Attempts' rejections are uncaught (line 57): an `unhandled` event,
//   lock() waits on, the acquire is `unknown`. An attempt in flight when lock() settled can still win if the
//   key vanished, its release dropped (line 61): a lock nobody holds until expiry. So no failAfter, one lock()
//   out (waitForLock); a win no acquire waits for (under load its INCR took a whole 30 ms wait) is kept for
//   the next acquire, at most min(its wait, 100 ms, ttl / 4), its lease refreshed then; else given back.
// - release is a script (GET == value then DEL and PUBLISH) whose result is not returned: it cannot
//   say not_owner. refreshTimeout is GET, then PEXPIRE if ours, resolving the same either way.
const {serve, library, bounded, quiet, connected, unhandledSoFar, NODE_REDIS_FAIL_FAST, retryMs, GRACE_MS, LATE} = require('../kits/js/protocol');
const {createClient} = library('redis');
const {lock, tryLock} = library('simple-redis-mutex');

let client = null, key = '', release = null;  // release: the last acquire's release function
let pending = null, want = null, kept = null;  // the one lock() out; its win to the waiting acquire, else kept

function waitForLock(ttl, wait, retry) {
  pending = pending || lock(client, key, {timeout: ttl, pollingInterval: retry}).then((won) => {
    pending = null;
    if (want) return want(won);
    kept = {won, ttl, timer: setTimeout(giveBack, Math.min(wait, 100, ttl / 4))};
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => { want = null; resolve(null); }, wait);
    want = (won) => { clearTimeout(timer); want = null; resolve(won); };
  });
}

async function giveBack(handed) {  // releases the kept win unless it is `handed` to an acquire
  const gone = kept; kept = null;
  if (gone) { clearTimeout(gone.timer); if (gone.won !== handed) await gone.won().catch(() => {}); }
}
async function take(m) {  // a release function, or null when the wait ran out
  const handed = kept && m.wait_ms > 0 && m.ttl_ms === kept.ttl ? kept.won : null;  // tryLock: one attempt, its ttl
  await giveBack(handed);
  if (handed) { await handed.refreshTimeout(); return handed; }  // back to a whole lease, if the key is still ours
  if (m.wait_ms > 0) return waitForLock(m.ttl_ms, m.wait_ms, retryMs(m));
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
    if (got) return {outcome: 'acquired', fencing_token: (release = got).fencingToken};
    return unhandledSoFar() > before ? {outcome: 'unknown', error: 'an attempt failed on a Redis error'} : 'timed_out';
  },
  async release() {
    const held = release; release = null;
    if (!held) return {outcome: 'already_expired', error: 'no hold to release'};
    await held();  // a Redis error throws: `error` (the kit, protocol.js)
    return 'released';
  },
  close: () => giveBack(),  // stdin ended: a kept win is not left to expire
  async extend() {
    if (!release) return {outcome: 'not_owner', error: 'no hold to extend'};
    await release.refreshTimeout();  // back to the acquire's ttl, not ttl_ms; resolves alike if the lock was gone
    return 'extended';
  },
});
