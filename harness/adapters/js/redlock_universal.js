#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): redlock-universal 0.8.5's RedLock on every server given, through
// using() (the README's recommended call), which extends the lock while its routine runs: from
// acquire to release. ioredis clients, each in the library's IoredisAdapter.
// Calls: new IoredisAdapter(client), createRedlock({adapters, key, ttl, retryAttempts, retryDelay}),
// lock.using(routine) and the routine's AbortSignal.
// What the source says (node_modules/redlock-universal/dist/index.cjs):
// - package.json says engines node >= 22; the CommonJS build (index.cjs) uses nothing newer than
//   node 20 has, and these calls run on node 20 (tests/peer_adapters_test.cpp).
// - acquire is SET NX PX on every node, a quorum of N/2+1, retried retryAttempts times (RedLock
//   acquire, lines 1128-1165); a node's error counts as a vote against, so "quorum not achieved" may hide
//   node failures: the adapter says timed_out only when every client is connected.
// - using() extends at 80% of the ttl if that is more than 1 s away, else at once (its "minimum
//   interval" branch, executeWithAutoExtension, lines 480-492): a ttl up to 1250 ms is extended
//   back to back. RedLock's extend is GET on every node, then a GET == value / PEXPIRE script on
//   every node. A failed extension aborts the routine's signal: the adapter's `lost`.
// - using() releases (GET == value then DEL, per node) after the routine and discards the
//   result (lines 575-596): `released` says only that the release ran. After a `lost`, the
//   adapter says already_expired. There is no extend in using()'s routine (it gets no handle).
// - an extension in flight when the routine ends schedules the next one, which runs after the
//   release and aborts the signal: `lost` is sent only for a signal aborted while held.
// - an attempt awaits every node's SET (Promise.allSettled, attemptLockAcquisition, line 1176;
//   the retry loop, lines 1128-1165): a dead node holds it until the library's per-command
//   timeout, 5 s (withTimeout, lines 274, 392), since ioredis at its defaults queues the command
//   for about 73 s (protocol.js, IOREDIS_FAIL_FAST). The row runs ioredis at its defaults (the README's
//   `new Redis()`), so under a node minority every attempt blocks past wait_ms: the kit answers
//   `unknown` with blocked_ms, judged liveness. `--failfast` (ext:redlock-universal+failfast) gives
//   ioredis enableOfflineQueue false and maxRetriesPerRequest 0: a dead node's SET fails at once.
// The wait (docs/peers.md, "A wait is a wait"): retryDelay is retry_ms; the library has no jitter
// (it sleeps retryDelay, line 1159), so retryAttempts is wait_ms / retry_ms, and the kit bounds the
// call (withinWait): a lock won in the 1 s grace after wait_ms is kept (acquired), as in every kit; one
// won after `unknown` is released.
const {serve, library, event, quiet, connected, variant, retriesWithin, withinWait, IOREDIS_FAIL_FAST, retryMs} =
  require('../kits/js/protocol');
const Redis = library('ioredis');
const {createRedlock, IoredisAdapter} = library('redlock-universal');

let clients = [];
let adapters = [];
let key = '';
let held = null;  // {finish, done, signal}: the running using() of the last acquire
const clientOptions = variant() === 'failfast' ? IOREDIS_FAIL_FAST : {};

serve({
  library: 'redlock-universal',
  capabilities: {expires: true, owner_checked_release: true, reentrant: false, fencing: false,
                 multi_node: true, notifies_waiters: false, auto_extends: true},
  async init(m) {
    clients = m.servers.map((s) => quiet(new Redis({host: s.host, port: s.port, ...clientOptions})));
    await Promise.all(clients.map((client) => connected(client)));
    adapters = clients.map((client) => new IoredisAdapter(client));
    key = m.key;
  },
  async acquire(m) {
    const lock = createRedlock({adapters, key, ttl: m.ttl_ms, retryAttempts: retriesWithin(m, retryMs(m)),
                                retryDelay: retryMs(m)});
    const got = new Promise((resolve, reject) => {
      const done = lock.using((signal) => {
        signal.addEventListener('abort', () => held && held.signal === signal && event('lost'));
        return new Promise((finish) => resolve({finish, done, signal}));
      });
      done.catch(reject);
    });
    try {
      const result = await withinWait(m, got, (late) => late.finish());  // won after `unknown`: released
      if (result.blocked) return result.blocked;
      held = result.value;
      return 'acquired';
    } catch (error) {
      const contended = /quorum not achieved/.test(error.cause && error.cause.message);
      const connected = clients.every((client) => client.status === 'ready');
      return {outcome: contended && connected ? 'timed_out' : 'unknown', error: error.message};
    }
  },
  async release() {
    const mine = held;
    held = null;
    if (!mine) return {outcome: 'already_expired', error: 'no hold to release'};
    const lost = mine.signal.aborted;
    mine.finish();
    await mine.done;
    return lost ? {outcome: 'already_expired', error: 'the library reported the lock lost'} : 'released';
  },
});
