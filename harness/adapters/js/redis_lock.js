#!/usr/bin/env node
'use strict';
// locklab adapter (docs/adapters.md): redis-lock 1.0.0 with node-redis 4, on its own (no protocol.js). Calls:
// redisLock(client, 5), lock(key, ttl) -> done, done(). lock() retries forever, on errors too; done() is a blind DEL.
const readline = require('readline');
const [{createClient}, redisLock] = [require('redis4'), require('redis-lock')];
const CAPABILITIES = {expires: true, owner_checked_release: false, reentrant: false, fencing: false,
                      multi_node: false, notifies_waiters: false, auto_extends: false};
function take(ttl, wait) {  // lock() cannot be cancelled: one at a time; a win nobody waits for is given back
  pending = pending || lock(key, ttl).then((won) => { pending = undefined; want ? want(won) : won().catch(() => {}); });
  return new Promise((resolve) => {
    const timer = setTimeout(() => { want = undefined; resolve('timed_out'); }, Math.max(wait, 5));
    want = (won) => { clearTimeout(timer); [want, done] = [undefined, won]; resolve('acquired'); };
  });
}
let lock, key, done, pending, want;  // pending: the one lock() out; want: hands its win to the acquire waiting
async function handle(m) {
  if (m.type === 'init') {
    const client = createClient({socket: m.servers[0], disableOfflineQueue: true}).on('error', () => {});  // fail fast
    await Promise.race([client.connect().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 1000))]);
    [lock, key] = [redisLock(client, 5), m.key];
    return {type: 'init_ok', library: 'redis-lock', version: require('redis-lock/package.json').version,
            language: 'javascript', capabilities: CAPABILITIES};
  }
  if (m.type === 'noop') return {type: 'noop_ok'};
  if (m.type === 'extend') return {type: 'extend_ok', outcome: 'error', error: 'redis-lock has no extend'};
  if (m.type === 'acquire') return {type: 'acquire_ok', outcome: await take(m.ttl_ms, m.wait_ms)};
  // release: DEL's 1 (whoever's value), 0 (no key), or undefined (nothing sent: our clock says the lease ran out)
  const deleted = done ? await done().catch((error) => error) : undefined;
  done = undefined;
  const outcome = deleted === 1 ? 'released' : deleted instanceof Error ? 'error' : 'already_expired';
  return {type: 'release_ok', outcome, ...(outcome === 'error' && {error: deleted.message})};
}
const lines = readline.createInterface({input: process.stdin});
let queue = Promise.resolve();  // one request at a time, in order; at the end of stdin, exit
lines.on('line', (line) => {
  const m = JSON.parse(line);
  queue = queue.then(() => handle(m)).then((reply) => process.stdout.write(`${JSON.stringify({id: m.id, ...reply})}\n`));
});
lines.on('close', () => queue.then(() => process.exit(0)));
