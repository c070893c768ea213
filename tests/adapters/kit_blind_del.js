#!/usr/bin/env node
'use strict';
// A blind-DEL lock on the JavaScript kit (tests/kit_locks_test.cpp): SET NX PX with a token, release = plain DEL.
const crypto = require('crypto');
const {serve, library, retryMs, awakeTimer} = require('../../harness/adapters/kits/js/protocol');
const Redis = library('ioredis');
const pause = (ms) => new Promise((resolve) => awakeTimer(ms, resolve));  // awake time: a SIGSTOP does not spend it
let client, key;
serve({
  library: 'kit-blind-del-js', version: '1', capabilities: {expires: true},
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
    return 'acquired';
  },
  async release() {  // the blind DEL: whoever holds the key now loses it
    await client.del(key);
    return 'released';
  },
});
