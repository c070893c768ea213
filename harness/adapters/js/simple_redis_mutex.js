#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): simple-redis-mutex 3.0.0 as its README runs it (readme.md:48-80), on
// node-redis 5 at its defaults (host and port only). Calls: lock(client, key, {timeout, pollingInterval,
// failAfter}) with the harness's ttl_ms, retry_ms and wait_ms through the library's own options
// (dist/index.js:43-46), tryLock(client, key, {timeout}) for wait_ms 0; release(); release.refreshTimeout()
// for `extend`; release.fencingToken (acquire_ok's). What the source says (node_modules/simple-redis-mutex/
// dist/index.js), each a finding of the row that this adapter leaves in place:
// - the key is "@simple-redis-mutex:lock-" + key, its value Math.random(); tryLock opens the pub/sub
//   connection on first use (:107, :158-179), SET NX PX, then, once held, INCR of one global counter for
//   the fencing token (:108-146): it orders INCRs, not holds.
// - lock() tries at once, on every release message and every pollingInterval, not waiting for the attempt
//   before (:54-77); failAfter rejects it (:78-84): `timed_out`. An attempt in flight then still wins if the
//   key is free, and its release is dropped (:57-61): a lock nobody holds until its ttl. An attempt that
//   Redis refuses rejects unhandled (:57): Node's default ends the process, as it would the service's.
// - release is a script (GET == value then DEL and PUBLISH) whose result is not returned (:193-206): it
//   cannot say not_owner. refreshTimeout is GET, then PEXPIRE if ours (:147-153), resolving alike.
const {serve, library, quiet, retryMs} = require('../kits/js/protocol');
const {createClient} = library('redis');
const {lock, tryLock} = library('simple-redis-mutex');

let client = null, key = '', release = null;  // release: the last acquire's release function

// [won, release]: lock() resolves with a release function and rejects only at failAfter (dist/index.js:78-84).
function take(m) {
  if (m.wait_ms === 0) return tryLock(client, key, {timeout: m.ttl_ms});
  const options = {timeout: m.ttl_ms, pollingInterval: retryMs(m), failAfter: m.wait_ms};
  return lock(client, key, options).then((won) => [true, won], () => [false, null]);
}

serve({
  library: 'simple-redis-mutex',
  capabilities: {expires: true, owner_checked_release: true, reentrant: false, fencing: true,
                 multi_node: false, notifies_waiters: true, auto_extends: false},
  async init(m) {
    client = quiet(createClient({socket: {host: m.servers[0].host, port: m.servers[0].port}}));
    await client.connect();
    key = m.key;
  },
  async acquire(m) {  // a failed attempt keeps the hold we have
    const [won, releaseFn] = await take(m);
    if (!won) return 'timed_out';
    release = releaseFn;
    return {outcome: 'acquired', fencing_token: release.fencingToken};
  },
  async release() {
    const held = release; release = null;
    if (!held) return {outcome: 'already_expired', error: 'no hold to release'};
    await held();  // a Redis error throws: `error` (the kit, protocol.js)
    return 'released';
  },
  async extend() {
    if (!release) return {outcome: 'not_owner', error: 'no hold to extend'};
    await release.refreshTimeout();  // back to the acquire's ttl, not ttl_ms; resolves alike if the lock was gone
    return 'extended';
  },
});
