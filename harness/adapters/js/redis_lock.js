#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): redis-lock 1.0.0 with node-redis 4 at its defaults (README.md's calls), on the
// JavaScript kit. Calls: redisLock(client, retry_ms), lock(key, ttl) -> done, done(). lock() retries forever, errors
// too, and has no wait: the harness's wait_ms is this adapter's (awakeTimer); done() is a blind DEL.
const {serve, library, awakeTimer, quiet, retryMs} = require('../kits/js/protocol');
const [{createClient}, redisLock] = [library('redis4'), library('redis-lock')];
let client, key, done, pending, want;  // pending: the one lock() out; want: hands its win to the acquire waiting
function take(m) {  // lock() cannot be cancelled: one at a time; a win nobody waits for is given back
  pending = pending || redisLock(client, retryMs(m))(key, m.ttl_ms).then((won) => {
    pending = undefined;
    want ? want(won) : won().catch(() => {});
  });
  return new Promise((resolve) => {
    const cancel = awakeTimer(Math.max(m.wait_ms, 5), () => { want = undefined; resolve('timed_out'); });
    want = (won) => { cancel(); [want, done] = [undefined, won]; resolve('acquired'); };
  });
}
serve({
  library: 'redis-lock',
  capabilities: {expires: true, owner_checked_release: false, reentrant: false, fencing: false,
                 multi_node: false, notifies_waiters: false, auto_extends: false},
  async init(m) {
    client = quiet(createClient({socket: {host: m.servers[0].host, port: m.servers[0].port}}));
    await client.connect();
    key = m.key;
  },
  acquire: take,
  async release() {  // DEL's 1 (whoever's value), 0 (no key), or undefined (nothing sent: our clock says it ran out)
    const deleted = done ? await done().catch((error) => error) : undefined;
    done = undefined;
    if (deleted instanceof Error) return {outcome: 'error', error: deleted.message};
    return deleted === 1 ? 'released' : 'already_expired';
  },
});
