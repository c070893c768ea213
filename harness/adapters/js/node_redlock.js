#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): node-redlock 4.2.0 (npm `redlock`) on every server given, with ioredis.
// Calls: new Redlock(clients, {retryCount: 0, ...}), redlock.lockWithOptions(key, ttl, {retryCount}),
// lock.unlock(), lock.extend(ttl); it listens to redlock's 'clientError' events.
// What the source says (node_modules/redlock/redlock.js):
// - acquire is one script per node (EXISTS, then SET PX for each key), a quorum of N/2+1, validity
//   start + ttl - drift; a failed attempt unlocks every node before the next (lines 347-445).
// - unlock and extend reject with the same LockError whether the quorum found another value, no
//   key, or a node failed; only 'clientError' (line 263) tells a node error apart.
// - `options.retryCount || self.retryCount` (line 393): a per-call retryCount of 0 means the
//   instance's, so the instance has 0 and extend (which uses it) makes one attempt.
// - an attempt waits for every node's answer (line 411): a silent node holds it until ioredis
//   gives up; the adapter answers `unknown` at wait_ms + GRACE_MS and unlocks a lock that comes later.
const {serve, library, bounded, quiet, connected, IOREDIS_FAIL_FAST, RETRY_MS, retryMs, GRACE_MS, LATE} = require('../kits/js/protocol');
const Redis = library('ioredis');
const Redlock = library('redlock');

let redlock = null;
let key = '';
let lock = null;  // the hold taken by the last acquire
let nodeErrors = 0;  // 'clientError' events so far

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
    const clients = m.servers.map((s) => quiet(new Redis({host: s.host, port: s.port, ...IOREDIS_FAIL_FAST})));
    await Promise.all(clients.map((client) => connected(client)));
    redlock = new Redlock(clients, {retryCount: 0, retryDelay: RETRY_MS, retryJitter: RETRY_MS});
    redlock.on('clientError', () => { nodeErrors += 1; });
    key = m.key;
  },
  async acquire(m) {
    const before = nodeErrors;
    const attempt = redlock.lockWithOptions(key, m.ttl_ms, {retryCount: Math.floor(m.wait_ms / retryMs(m)),
                                                                    retryDelay: retryMs(m)});
    try {
      const got = await bounded(attempt, m.wait_ms + GRACE_MS, (late) => late.unlock().catch(() => {}));
      if (got === LATE) return {outcome: 'unknown', error: `redlock still waiting ${GRACE_MS} ms after wait_ms`};
      lock = got;
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
