#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): @sesamecare-oss/redlock 1.4.0 on every server given (ioredis),
// through using(), which extends the lock while its routine runs: from acquire to release.
// Calls: new Redlock(clients, {retryDelay}), redlock.using([key], ttl, settings, routine),
// context.lock.extend(ttl) for `extend` (using() then extends and releases that lock).
// What the source says (node_modules/@sesamecare-oss/redlock/src/index.ts):
// - acquire, extend and release are one script per node (scripts.ts: EXISTS then SET PX; GET then
//   SET PX; GET then DEL), decided at a quorum; the failed votes are in ExecutionError.attempts.
// - using() throws unless ttl >= automaticExtensionThreshold + 100 (default 500, line 545): the
//   adapter uses min(500, ttl / 2). It extends threshold ms before expiry, retrying while the lock
//   is still valid; then it aborts the routine's signal (lines 558-584): the adapter's `lost`.
// - using() awaits the release after the routine and rejects with its error (line 613); the
//   release takes the instance's settings (build/index.js:65, 176-180): retryCount at its default
//   10, retryDelay the harness's retry_ms (the instance is made at the first acquire, which carries it).
// - _attemptOperation resolves at a quorum either way (build/index.js:232-285): with 3 of 5 nodes
//   alive, an attempt with neither 3 votes for nor 3 against waits for a dead node's answer, at
//   ioredis's defaults about 73 s (protocol.js, IOREDIS_FAIL_FAST): blocked past wait_ms, liveness.
//   Two contenders that split the live nodes are such attempts. No variant: the fail-fast client
//   turns the same split into the retry stall below, liveness too (docs/peers.md).
// - retries keep the value of the first attempt (_execute, build/index.js:206-230) and the acquire
//   script refuses a key that exists (scripts.js:9-25), its own value included: an attempt that won
//   some nodes cannot win them again until they expire; only after the last attempt does acquire
//   release its partial votes (build/index.js:158-163).
// The wait (docs/peers.md, "A wait is a wait"): retryDelay is retry_ms, retryJitter its default 100
// (build/index.js:12; the README's example keeps it), the retry count wait_ms over the mean pause
// (meanRetryDelay; the sleep is max(0, delay + jitter x U(-1, 1)), build/index.js:227), and the kit
// bounds the call (withinWait): a lock won in the 1 s grace after wait_ms is kept (acquired), as in
// every kit; one won after `unknown` is released.
// The ttl is the harness's: automaticExtensionThreshold (default 500) must be <= ttl - 100 or using()
// throws (build/index.js:336), so it is min(500, ttl / 2), the one setting forced off its default.
// - an extension in flight when the routine ends queues the next one after the release, which
//   then aborts the signal: `lost` is sent only for a signal aborted while held.
const {serve, library, event, bounded, quiet, connected, meanRetryDelay, retriesWithin, withinWait, retryMs, LATE} =
  require('../kits/js/protocol');
const Redis = library('ioredis');
const {Redlock, ExecutionError, ResourceLockedError} = library('@sesamecare-oss/redlock');
let clients = [], redlock = null, key = '';
const JITTER_MS = 100;  // the library's default retryJitter (build/index.js:12), for the mean only
let held = null;  // {context, finish, done}: the running using() of the last acquire

// Definite when nothing was sent (no attempt) or every vote of the last attempt is in and found
// the key taken (acquire) or not ours (release, extend), or, for an acquire, never left (a dead
// node: an ioredis without an offline queue refuses to send): nothing taken there; else indefinite.
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
    clients = m.servers.map((s) => quiet(new Redis({host: s.host, port: s.port})));
    await Promise.all(clients.map((client) => connected(client)));
    key = m.key;
  },
  async acquire(m) {
    if (m.ttl_ms < 200) return {outcome: 'error', error: 'using() needs ttl_ms >= 200 here (threshold ttl/2 + 100)'};
    if (!redlock) redlock = new Redlock(clients, {retryDelay: retryMs(m)});
    const settings = {retryCount: retriesWithin(m, meanRetryDelay(retryMs(m), JITTER_MS)), retryDelay: retryMs(m),
                      automaticExtensionThreshold: Math.min(500, Math.floor(m.ttl_ms / 2))};
    const got = new Promise((resolve, reject) => {
      const done = redlock.using([key], m.ttl_ms, settings, (signal, context) => {
        signal.addEventListener('abort', () => held && held.context === context && event('lost'));
        return new Promise((finish) => resolve({context, finish, done}));
      });
      done.catch(reject);  // before the routine: acquire failed; after: release's, read in release()
    });
    try {
      const result = await withinWait(m, got, (late) => late.finish());  // won after `unknown`: released
      if (result.blocked) return result.blocked;
      held = result.value;
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
