#!/usr/bin/env node
'use strict';
// An adapter on the JS kit whose "library" blocks (tests/adapter_run_test.cpp, ABlockedCallIsLiveness):
// a correct lock (SET NX PX with a token, compare-and-delete, with ioredis), except that client 1's
// second acquire is a call that never returns, as a library waiting on a dead node does. The kit's
// withinWait answers it `unknown` with blocked_ms; the harness judges the run liveness. argv[2]: a marker.
const {serve, library, withinWait, retryMs} = require('../../harness/adapters/kits/js/protocol');
const Redis = library('ioredis');
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
let redis = null, key = '', client = 0, token = '', acquires = 0;

async function poll(m) {
  for (const end = Date.now() + m.wait_ms; ; await new Promise((r) => setTimeout(r, retryMs(m)))) {
    token = String(Math.random());
    if (await redis.set(key, token, 'PX', m.ttl_ms, 'NX')) return true;
    if (Date.now() >= end) return false;
  }
}

serve({
  library: 'blocks', version: '0', capabilities: {expires: true, owner_checked_release: true},
  async init(m) {
    redis = new Redis({host: m.servers[0].host, port: m.servers[0].port});
    [key, client] = [m.key, m.client];
  },
  async acquire(m) {
    acquires += 1;
    const call = client === 1 && acquires === 2 ? new Promise(() => {}) : poll(m);
    const got = await withinWait(m, call, () => {});
    if (got.blocked) return got.blocked;
    return got.value ? 'acquired' : 'timed_out';
  },
  async release() {
    return (await redis.eval(RELEASE, 1, key, token)) === 1 ? 'released' : 'not_owner';
  },
});
