#!/usr/bin/env node
'use strict';
// A correct lock on the JavaScript kit (tests/kit_locks_test.cpp): SET NX PX with a token, compare-and-delete release.
const crypto = require('crypto');
const {serve, library, retryMs, awakeTimer} = require('../../harness/adapters/kits/js/protocol');
const Redis = library('ioredis');
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
const pause = (ms) => new Promise((resolve) => awakeTimer(ms, resolve));  // awake time: a SIGSTOP does not spend it
let client, key, token;
serve({
  library: 'kit-cad-js', version: '1', capabilities: {expires: true, owner_checked_release: true},
  async init(m) {
    client = new Redis({host: m.servers[0].host, port: m.servers[0].port});
    key = m.key;
  },
  async acquire(m) {
    const mine = crypto.randomUUID();
    let over = m.wait_ms <= 0;  // wait_ms 0: exactly one attempt
    const cancel = awakeTimer(m.wait_ms, () => { over = true; });
    try {
      while ((await client.set(key, mine, 'PX', m.ttl_ms, 'NX')) !== 'OK') {
        if (over) return 'timed_out';
        await pause(retryMs(m));
      }
    } finally {
      cancel();
    }
    token = mine;
    return 'acquired';
  },
  async release() {  // one EVAL: a late release deletes nothing of the next holder's
    const mine = token;
    token = undefined;
    return mine && (await client.eval(RELEASE, 1, key, mine)) === 1 ? 'released' : 'already_expired';
  },
});
