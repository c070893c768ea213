#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): @sesamecare-oss/redlock 1.4.0 on every server given (ioredis),
// through using(), which extends the lock while its routine runs: from acquire to release.
// Calls: new Redlock(clients, {retryCount: 0, ...}), redlock.using([key], ttl, settings, routine),
// context.lock.extend(ttl) for `extend` (using() then extends and releases that lock).
// What the source says (node_modules/@sesamecare-oss/redlock/src/index.ts):
// - acquire, extend and release are one script per node (scripts.ts: EXISTS then SET PX; GET then
//   SET PX; GET then DEL), decided at a quorum; the failed votes are in ExecutionError.attempts.
// - using() throws unless ttl >= automaticExtensionThreshold + 100 (default 500, line 545): the
//   adapter uses min(500, ttl / 2). It extends threshold ms before expiry, retrying while the lock
//   is still valid; then it aborts the routine's signal (lines 558-584): the adapter's `lost`.
// - using() awaits the release after the routine and rejects with its error (line 613); the
//   release takes the instance's retryCount, 0 here (the default 10 x 200 ms outlasts locklab's margin).
// - an extension in flight when the routine ends queues the next one after the release, which
//   then aborts the signal: `lost` is sent only for a signal aborted while held.
const {serve, library, event, bounded, quiet, connected, IOREDIS_FAIL_FAST, RETRY_MS, retryMs, GRACE_MS, LATE} = require('../kits/js/protocol');
const Redis = library('ioredis');
const {Redlock, ExecutionError, ResourceLockedError} = library('@sesamecare-oss/redlock');
let redlock = null, key = '';
let held = null;  // {context, finish, done}: the running using() of the last acquire

// Definite when nothing was sent (no attempt) or every vote of the last attempt is in and found
// the key taken (acquire) or not ours (release, extend), or, for an acquire, never left (a dead
// node: ioredis without an offline queue refuses to send): nothing taken there; else indefinite.
async function classify(error, definite, indefinite, unsent = false) {
  if (!(error instanceof ExecutionError)) return {outcome: indefinite, error: error.message};
  if (error.attempts.length === 0) return {outcome: definite, error: error.message};
  const stats = await bounded(error.attempts[error.attempts.length - 1], 100);  // LATE: a vote is still out
  const votes = stats === LATE ? [] : [...stats.votesAgainst.values()];
  const locked = votes.length > 0 && votes.length + stats.votesFor.size === stats.membershipSize &&
                 votes.every((vote) => vote instanceof ResourceLockedError || (unsent && /enableOfflineQueue/.test(vote.message)));
  return {outcome: locked ? definite : indefinite, error: error.message};
}

serve({
  library: '@sesamecare-oss/redlock',
  capabilities: {expires: true, owner_checked_release: true, reentrant: false, fencing: false,
                 multi_node: true, notifies_waiters: false, auto_extends: true},
  async init(m) {
    const clients = m.servers.map((s) => quiet(new Redis({host: s.host, port: s.port, ...IOREDIS_FAIL_FAST})));
    await Promise.all(clients.map((client) => connected(client)));
    redlock = new Redlock(clients, {retryCount: 0, retryDelay: RETRY_MS, retryJitter: RETRY_MS});
    key = m.key;
  },
  async acquire(m) {
    if (m.ttl_ms < 200) return {outcome: 'error', error: 'using() needs ttl_ms >= 200 here (threshold ttl/2 + 100)'};
    const settings = {retryCount: Math.floor(m.wait_ms / retryMs(m)), retryDelay: retryMs(m),
                      automaticExtensionThreshold: Math.min(500, Math.floor(m.ttl_ms / 2))};
    const got = new Promise((resolve, reject) => {
      const done = redlock.using([key], m.ttl_ms, settings, (signal, context) => {
        signal.addEventListener('abort', () => held && held.context === context && event('lost'));
        return new Promise((finish) => resolve({context, finish, done}));
      });
      done.catch(reject);  // before the routine: acquire failed; after: release's, read in release()
    });
    try {
      const result = await bounded(got, m.wait_ms + GRACE_MS, (late) => late.finish());  // a late lock: released
      if (result === LATE) return {outcome: 'unknown', error: `using() still acquiring ${GRACE_MS} ms after wait_ms`};
      held = result;
      return 'acquired';
    } catch (error) {
      return classify(error, 'timed_out', 'unknown', true);
    }
  },
  async release() {
    const mine = held;
    held = null;
    if (!mine) return {outcome: 'already_expired', error: 'no hold to release'};
    mine.finish();
    return mine.done.then(() => 'released', (error) => classify(error, 'not_owner', 'error'));
  },
  async extend(m) {
    if (!held) return {outcome: 'not_owner', error: 'no hold to extend'};
    const context = held.context;
    return context.lock.extend(m.ttl_ms).then((lock) => { context.lock = lock; return 'extended'; },
                                              (error) => classify(error, 'not_owner', 'error'));
  },
});
