#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): node-redlock 4.2.0 (npm `redlock`) on every server given, with ioredis.
// Calls: new Redlock(clients, {retryCount: 0, retryDelay}), redlock.lockWithOptions(key, ttl, {retryCount, retryDelay}),
// lock.unlock(), lock.extend(ttl); it listens to redlock's 'clientError' events.
// What the source says (node_modules/redlock/redlock.js):
// - acquire is one script per node (EXISTS, then SET PX for each key), a quorum of N/2+1, validity
//   start + ttl - drift; a failed attempt unlocks every node before the next (lines 347-445).
// - unlock and extend reject with the same LockError whether the quorum found another value, no
//   key, or a node failed; only 'clientError' (line 263) tells a node error apart.
// - `options.retryCount || self.retryCount` (line 393): a per-call retryCount of 0 means the
//   instance's, so the instance has 0 and extend (which uses it) makes one attempt.
// - an attempt waits for every node's answer (line 411): a dead node holds it until ioredis
//   gives up on its command, at ioredis's defaults after about 73 s of reconnect tries (the kit,
//   protocol.js, IOREDIS_FAIL_FAST's comment). The row runs ioredis at its defaults (the README's
//   `new Client()`), so under a node minority every attempt blocks past wait_ms: the kit answers
//   `unknown` with blocked_ms, judged liveness. `--failfast` (the variant ext:node-redlock+failfast)
//   gives ioredis enableOfflineQueue false and maxRetriesPerRequest 0: a dead node votes no at once.
// The wait (docs/peers.md, "A wait is a wait"): the harness owns ttl, wait_ms and retry_ms. The retry
// delay is retry_ms; retryJitter stays at its default (100 ms, line 62: the README calls it what
// "improves performance under high contention", and nothing in it says to turn it off). Between
// attempts the library sleeps max(0, retryDelay + jitter x U(-1, 1)) (line 428), so the retry count
// is wait_ms over that mean (meanRetryDelay), and the kit bounds the call (withinWait): a lock won in
// the 1 s grace after wait_ms is kept (acquired), as in every kit; one won after `unknown` is unlocked.
const {serve, library, quiet, connected, variant, meanRetryDelay, retriesWithin, withinWait, IOREDIS_FAIL_FAST, retryMs} =
  require('../kits/js/protocol');
const Redis = library('ioredis');
const Redlock = library('redlock');

let redlock = null;
let key = '';
let lock = null;  // the hold taken by the last acquire
let nodeErrors = 0;  // 'clientError' events so far
const JITTER_MS = 100;  // node-redlock's default retryJitter (redlock.js:62), passed only to compute the mean
const clientOptions = variant() === 'failfast' ? IOREDIS_FAIL_FAST : {};

// A failed call's word: a node error makes it indefinite, else `definite`.
function failed(error, before, definite) {
  const indefinite = nodeErrors > before;
  return {outcome: indefinite ? (definite === 'timed_out' ? 'unknown' : 'error') : definite,
          error: `${error.message}${indefinite ? ' (a node failed)' : ''}`};
}

serve({
  library: 'redlock',
  capabilities: {expires: true, owner_checked_release: true, reentrant: false, fencing: false,
                 multi_node: true, notifies_waiters: false, auto_extends: false},
  async init(m) {
    const clients = m.servers.map((s) => quiet(new Redis({host: s.host, port: s.port, ...clientOptions})));
    await Promise.all(clients.map((client) => connected(client)));
    redlock = new Redlock(clients, {retryCount: 0});  // extend's one attempt (line 393); jitter: its default
    redlock.on('clientError', () => { nodeErrors += 1; });
    key = m.key;
  },
  async acquire(m) {
    const before = nodeErrors;
    const retryCount = retriesWithin(m, meanRetryDelay(retryMs(m), JITTER_MS));
    const giveBack = (late) => late.unlock().catch(() => {});  // won after the kit answered `unknown`
    try {
      // retryCount 0 would mean the instance's (line 393): a wait of 0 is one attempt either way.
      const got = await withinWait(m, redlock.lockWithOptions(key, m.ttl_ms, {retryCount, retryDelay: retryMs(m)}), giveBack);
      if (got.blocked) return got.blocked;
      lock = got.value;
      return 'acquired';
    } catch (error) {
      if (error instanceof Redlock.LockError) return failed(error, before, 'timed_out');
      throw error;
    }
  },
  async release() {
    if (!lock) return {outcome: 'already_expired', error: 'no hold to release'};
    const [held, before] = [lock, nodeErrors];
    lock = null;
    try {
      await held.unlock();
      return 'released';
    } catch (error) {
      return failed(error, before, 'not_owner');
    }
  },
  async extend(m) {
    if (!lock) return {outcome: 'not_owner', error: 'no hold to extend'};
    const before = nodeErrors;
    try {
      await lock.extend(m.ttl_ms);  // modifies and returns the same Lock
      return 'extended';
    } catch (error) {
      return failed(error, before, 'not_owner');
    }
  },
});
