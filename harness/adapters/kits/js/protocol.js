'use strict';
// locklab's JavaScript adapter kit (docs/adapters.md): the adapter protocol's
// JSON-lines loop and the bounds every adapter needs, so that each adapter is
// only its library's calls. Beside it, package.json and package-lock.json pin
// the libraries, and `install` puts them into node_modules here: an adapter
// loads its library with `library(name)`, resolved from this folder (node looks
// for node_modules beside the file that calls require, and an adapter's own
// folder, harness/adapters/js/, has none).
//
// serve({library, version, capabilities, init, acquire, release, extend, close}) answers one
// request at a time, in order: init -> init_ok (the adapter's `version`, else the
// installed package's, read from node_modules/<library>/package.json, else
// 'unknown' for a library of your own that is not installed there), acquire ->
// acquire_ok, release -> release_ok, extend -> extend_ok, noop -> noop_ok.
// A handler returns an outcome word or {outcome, error, ...}. A handler that
// throws answers "when in doubt": acquire `unknown`, release and extend
// `error`. A line that is not JSON is answered with an error line, and the
// adapter goes on. A library without extend answers extend with `error`. When stdin
// ends the adapter answers what it has read, runs its close() if it has one,
// and exits, holding or not: its timers (a watchdog) stop with it, as a
// crashed client's would.
//
// Defaults (docs/peers.md, "Defaults and variants"): an adapter runs its library as the library's
// README does. The kit installs no unhandledRejection handler: Node's default applies (Node 20
// prints the error on stderr and exits with status 1), and the harness judges an adapter that dies
// mid-run as a crashed client, with that stderr line as the reason. A library call that does not
// return past the harness's wait bound is answered `unknown` with `blocked_ms` (acquire: withinWait;
// release and extend: past ANSWER_MS), which the harness judges `liveness`: the call would have
// hung the service. A named variant (`node js/x.js --failfast`, variant() below) may depart from
// the defaults; the catalog gives its reason.
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const util = require('util');

const RETRY_MS = 5;  // the pause between attempts when the acquire request carries no retry_ms (older harnesses)
const GRACE_MS = 1000;  // an acquire's attempt on its way at wait_ms: its win within this is kept; still silent, it is stuck
const ANSWER_MS = 1500;  // release and extend answer within this, under AdapterLock's 2000 ms margin
const CLOSE_MS = 500;  // close() at the end of stdin, under AdapterLock's 1000 ms exit grace (then SIGKILL)
const LATE = Symbol('late');
const lateGiveBacks = new Set();  // wins after `unknown` on their way back (withinWait): the end of stdin waits for them

let unhandled = 0;

// The variant this adapter runs as: its first `--NAME` argument (the catalog's adapter argv, e.g.
// ["node", "js/node_redlock.js", "--failfast"]), '' for the row at the library's defaults.
function variant() {
  const flag = process.argv.slice(2).find((word) => word.startsWith('--'));
  return flag ? flag.slice(2) : '';
}

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

// An unasked line: {"type":"event","event":"lost"} when the library reports a lost lock.
function event(name, fields = {}) {
  send({type: 'event', event: name, ...fields});
}

// The version of `library` installed in this folder's node_modules, 'unknown' if it is not there.
function installedVersion(library) {
  const file = path.join(__dirname, 'node_modules', library, 'package.json');
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return 'unknown';
    throw error;
  }
  return JSON.parse(text).version;
}

// A pinned library, from this folder's node_modules (see the top).
function library(name) {
  return require(name);
}

// The acquire request's pause between attempts (the run's --retry), else RETRY_MS.
function retryMs(m) {
  return Number.isInteger(m.retry_ms) && m.retry_ms > 0 ? m.retry_ms : RETRY_MS;
}

// Calls `fire` once `ms` of the time this process could run have passed, and
// returns what cancels it. A holder-pause SIGSTOPs a client with its adapter,
// and node's timers run on a clock that goes on meanwhile: a plain timer would
// fire at SIGCONT, before the reply the pause held back. So the time is counted
// in steps, a step that took longer than two (the process was stopped) counting
// as two, as AdapterLock counts its own bound (harness/support/awake_time.h).
const AWAKE_STEP_MS = 50;
function awakeTimer(ms, fire) {
  let left = Math.max(ms, 0);
  let last = performance.now();
  let timer;
  const check = () => {
    const now = performance.now();
    left -= Math.min(now - last, 2 * AWAKE_STEP_MS);
    last = now;
    if (left <= 0) return fire();
    timer = setTimeout(check, Math.min(left, AWAKE_STEP_MS));
  };
  timer = setTimeout(check, Math.min(left, AWAKE_STEP_MS));
  return () => clearTimeout(timer);
}

// `promise`'s value, or LATE after `ms` (awake: see awakeTimer). A value that
// arrives after LATE was answered goes to `onLate`: the adapter gives back a
// lock it no longer wants.
function bounded(promise, ms, onLate = () => {}) {
  let cancel;
  const late = new Promise((resolve) => { cancel = awakeTimer(ms, () => resolve(LATE)); });
  return Promise.race([promise, late]).then((value) => {
    cancel();
    if (value === LATE) promise.then(onLate, () => {});
    return value;
  }, (error) => {
    cancel();
    throw error;
  });
}

// A Redis client's 'error' events (a refused or reset connection) are also the
// failures of the commands the library sent, which the library reports; an
// 'error' event without a listener would crash node-redis and spam ioredis.
function quiet(client) {
  client.on('error', () => {});
  return client;
}

// Client options that fail a command at once while its server cannot be reached: not the
// libraries' defaults, so only the `+failfast` variant rows use them (docs/peers.md, "Defaults and
// variants"). By default ioredis 6 queues a command while it reconnects (enableOfflineQueue true,
// ioredis/built/redis/RedisOptions.js:46) and rejects it only after maxRetriesPerRequest 20
// reconnect tries (:57; event_handler.js:337-348), each after min(2^(n-1) x 50, 5000) ms plus up
// to 200 ms of jitter (RedisOptions.js:11-16): about 73 s for a dead node. node-redis 4 and 5+
// queue it until the server is back. ioredis: no offline queue, no retry of a command cut off
// by a reset; node-redis 4 and 5+: no offline queue (node-redis 3: enable_offline_queue false).
const IOREDIS_FAIL_FAST = {enableOfflineQueue: false, maxRetriesPerRequest: 0};
const NODE_REDIS_FAIL_FAST = {disableOfflineQueue: true};

// Resolves once `client` (ioredis or node-redis) is connected, or failed to
// connect, or after `ms`: without an offline queue a command sent before the
// connection is up fails, and a server that is down must not hold up init.
function connected(client, ms = 1000) {
  return new Promise((resolve) => {
    const done = () => { clearTimeout(timer); resolve(); };
    const timer = setTimeout(done, ms);
    if (client.status === 'ready' || client.isReady === true || client.ready === true) return done();
    client.once('ready', done);
    client.once('error', done);
  });
}

// Unhandled rejections seen so far, for a variant that logs them (logUnhandled()) instead of
// Node's default, which ends the process (and the harness then judges a crashed client).
function unhandledSoFar() {
  return unhandled;
}

// A variant's choice, never the default: an unhandled rejection becomes an `unhandled` event
// and the adapter goes on, as a service with a process-wide handler would.
function logUnhandled() {
  process.on('unhandledRejection', (error) => {
    unhandled += 1;
    event('unhandled', {error: String(error && error.message || error)});
  });
}

// The mean pause of a retry loop that sleeps max(0, delay + floor((2u - 1) x jitter)), u uniform in
// [0, 1) (node-redlock 4 redlock.js:428, @sesamecare-oss/redlock build/index.js:227): what a retry
// count is computed from, so that the library's own loop ends near wait_ms.
function meanRetryDelay(delay, jitter = 0) {
  if (jitter <= 0) return Math.max(delay, 0);
  if (delay >= jitter) return delay;
  const positive = (delay + jitter) / (2 * jitter);  // the share of draws above 0, each uniform in (0, delay + jitter]
  return positive * (delay + jitter) / 2;
}

// The retries that fill wait_ms at `meanDelay` apart (at least 0).
function retriesWithin(m, meanDelay) {
  return Math.max(0, Math.floor(m.wait_ms / Math.max(meanDelay, 1)));
}

// An acquire's library call bounded by the harness's wait (docs/adapters.md, "A wait is a wait"), one rule
// in every kit: the wait ends at wait_ms, and an attempt on its way then gets GRACE_MS more. Its answer,
// a win too, is the acquire's: the library said yes, a caller would enter, and the harness sees and
// judges the section (a win given back here would hide a second grant from the checker). wait_ms 0 is
// one attempt, its answer whenever it comes within GRACE_MS. Still silent at wait_ms + GRACE_MS: the
// library blocks past its wait bound, answered `unknown` with `blocked_ms`, which the harness judges
// liveness; a win after that goes to `giveBack` (the harness was told `unknown`: nobody holds it).
// Returns {value} (the library's answer, within wait_ms + GRACE_MS) or {blocked} (the reply); the
// library's rejection is thrown.
async function withinWait(m, call, giveBack = () => {}) {
  const began = performance.now();
  const value = await bounded(call, m.wait_ms + GRACE_MS);
  if (value !== LATE) return {value};
  const given = Promise.resolve(call).then(giveBack, () => {}).catch(() => {});  // a give-back that fails: the lease ends it
  lateGiveBacks.add(given);
  given.then(() => lateGiveBacks.delete(given));
  const ms = Math.round(performance.now() - began - m.wait_ms);
  return {blocked: {outcome: 'unknown', blocked_ms: ms,
                    error: `acquire blocked ${ms} ms past its wait bound (the library still waiting)`}};
}
const REPLY = {acquire: 'acquire_ok', release: 'release_ok', extend: 'extend_ok'};
const IN_DOUBT = {acquire: 'unknown', release: 'error', extend: 'error'};

async function answer(adapter, message) {
  const type = message.type;
  if (type === 'noop') return {type: 'noop_ok'};
  if (type === 'init') {
    await adapter.init(message);
    return {type: 'init_ok', library: adapter.library, version: adapter.version ?? installedVersion(adapter.library),
            language: 'javascript', capabilities: adapter.capabilities};
  }
  if (!REPLY[type]) return {type: 'error', error: `unknown request type ${type}`};
  if (!adapter[type]) return {type: REPLY[type], outcome: 'error', error: `${adapter.library} has no ${type}`};
  let result;
  try {
    // release and extend: bounded here; acquire: by each adapter, which knows whether its library's wait is bounded.
    result = type === 'acquire' ? await adapter.acquire(message) : await bounded(adapter[type](message), ANSWER_MS);
    if (result === LATE) {  // the library's call is still waiting: it would hold up the service
      result = {outcome: 'error', blocked_ms: ANSWER_MS,
                error: `${type} blocked past ${ANSWER_MS} ms (the library still waiting)`};
    }
  } catch (error) {
    result = {outcome: IN_DOUBT[type], error: String(error && error.message || error)};
  }
  return {type: REPLY[type], ...(typeof result === 'string' ? {outcome: result} : result)};
}

// Resolves once every Redis command the library queued so far was written to its socket. node-redis
// writes its queue on setImmediate, while a reply here is written at once: simple-redis-mutex's
// lock() polls without waiting for its previous attempt, and an attempt queued before its win
// was answered could reach Redis after acquire_ok had reached the harness, so a fault acting
// on the holder's key found a command of the holder's still on its way (docs/adapters.md,
// "Replies come last"). setImmediate callbacks run in order: node-redis's comes first.
function afterQueuedWrites() {
  return new Promise((resolve) => setImmediate(resolve));
}

function serve(adapter) {
  // What a library prints with console (node-redisson's failed renewal, simple-redis-mutex's
  // subscriber errors) goes out as `log` events, which the harness ignores: on stderr it would
  // interleave with locklab's own lines, and console.log on stdout would break the protocol.
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    console[level] = (...args) => event('log', {level, text: util.format(...args).slice(0, 500)});
  }
  let queue = Promise.resolve();
  const lines = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  lines.on('line', (line) => {
    queue = queue.then(async () => {
      let message;
      try {
        message = JSON.parse(line);
      } catch (error) {
        return send({id: null, type: 'error', error: `not JSON: ${line.slice(0, 80)}`});
      }
      // `null` or `3` parse too: without this, reading .type would reject the queue and end every later answer.
      if (!message || typeof message !== 'object') return send({id: null, type: 'error', error: `not a request: ${line.slice(0, 80)}`});
      let reply;
      try {
        reply = await answer(adapter, message);
      } catch (error) {
        reply = {type: 'error', error: String(error && error.message || error)};
      }
      if (message.type === 'acquire') await afterQueuedWrites();
      send({id: message.id, ...reply});
    });
  });
  // The requests already read are answered first; then the late wins still on their way back (as the Go,
  // Rust, Java and Python kits: process.exit would drop them) and the adapter's close(), if it has one,
  // beside them (a give-back stuck on a dead connection must not keep close() from running), together
  // bounded by CLOSE_MS.
  const ending = () => Promise.all([...lateGiveBacks, Promise.resolve().then(() => adapter.close && adapter.close())]);
  lines.on('close', () => queue.then(() => bounded(ending(), CLOSE_MS)).catch(() => {}).then(() => process.exit(0)));
}

module.exports = {serve, library, retryMs, event, bounded, awakeTimer, quiet, connected, unhandledSoFar, logUnhandled,
                  variant, meanRetryDelay, retriesWithin, withinWait, installedVersion, IOREDIS_FAIL_FAST,
                  NODE_REDIS_FAIL_FAST, RETRY_MS, GRACE_MS, ANSWER_MS, LATE};
