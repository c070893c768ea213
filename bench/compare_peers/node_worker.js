#!/usr/bin/env node
// One compare-peers worker: node-redlock (4.2.0 or 5.0.0-beta.2) or
// redis-semaphore's Mutex through locklab's workload. Its modules are the ones
// harness/adapters/kits/js/install puts in harness/adapters/kits/js/node_modules
// (redlock 4.2.0 as `redlock`, 5.0.0-beta.2 as the alias `redlock5`): the adapters'
// pinned installs, so the worker and the adapters run the same package versions.
//
// Loop until the deadline: acquire (bounded by --wait-ms, retrying every
// --retry-ms; node-redlock adds up to --retry-ms of jitter, without which its
// votes split in lockstep on 5 nodes), GET counter, sleep --hold-ms, SET counter+1,
// release. Prints one JSON line: per-worker counts and every acquisition's
// wait (µs from wanting the lock, across abandoned attempts, to holding it).
//
// With --cycles (the uncontended row): no counter, no hold, just acquire +
// release until the deadline, after one warm-up cycle outside the count
// (connections, scripts). Prints cycles and the per-cycle latency p50/p99.
//
// Usage: node_worker.js --peer redlock4|redlock5|semaphore --lock H:P[,H:P...]
//        (--counter H:P | --cycles) --start EPOCH_S --duration S [--key K]
//        [--hold-ms N] [--ttl-ms N] [--wait-ms N] [--retry-ms N] [--worker N]
'use strict';

const path = require('path');
// Resolved from the JavaScript kit's folder, not this one: node looks for node_modules beside the caller.
const library = require('module').createRequire(
  path.join(__dirname, '..', '..', 'harness', 'adapters', 'kits', 'js', 'package.json'));
const Redis = library('ioredis');

function parse(argv) {
  const options = {key: 'locklab:lock', counterKey: 'locklab:counter', holdMs: 1, ttlMs: 2000, waitMs: 1000,
                   retryMs: 5, worker: 0, cycles: false};
  const names = {'--peer': 'peer', '--lock': 'lock', '--counter': 'counter', '--start': 'start',
                 '--duration': 'duration', '--key': 'key', '--hold-ms': 'holdMs', '--ttl-ms': 'ttlMs',
                 '--wait-ms': 'waitMs', '--retry-ms': 'retryMs', '--worker': 'worker'};
  for (let i = 2; i < argv.length; i += 2) {
    if (argv[i] === '--cycles') {  // a flag: no value
      options.cycles = true;
      i -= 1;
      continue;
    }
    const name = names[argv[i]];
    if (!name || i + 1 >= argv.length) {
      console.error(`node_worker.js: bad argument ${argv[i]}`);
      process.exit(2);
    }
    options[name] = ['peer', 'lock', 'counter', 'key'].includes(name) ? argv[i + 1] : Number(argv[i + 1]);
  }
  for (const required of ['peer', 'lock', ...(options.cycles ? [] : ['counter']), 'start', 'duration']) {
    if (options[required] === undefined) {
      console.error(`node_worker.js: --${required} is required`);
      process.exit(2);
    }
  }
  return options;
}

function client(address) {
  const [host, port] = address.split(':');
  return new Redis({host, port: Number(port), lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: true});
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// acquire() -> a release function, or null when the wait ran out. Throws on errors.
function lockerFor(options, servers) {
  const attempts = Math.max(1, Math.round(options.waitMs / options.retryMs));
  if (options.peer === 'redlock4') {
    const Redlock = library('redlock');
    const redlock = new Redlock(servers, {retryCount: attempts, retryDelay: options.retryMs, retryJitter: options.retryMs});
    return async () => {
      try {
        const lock = await redlock.lock(options.key, options.ttlMs);
        return () => lock.unlock();
      } catch (e) {
        if (e instanceof Redlock.LockError) return null;
        throw e;
      }
    };
  }
  if (options.peer === 'redlock5') {
    const {default: Redlock, ExecutionError} = library('redlock5');
    const redlock = new Redlock(servers, {retryCount: attempts, retryDelay: options.retryMs, retryJitter: options.retryMs});
    redlock.on('error', () => {});  // a refused vote is not an error here
    return async () => {
      try {
        const lock = await redlock.acquire([options.key], options.ttlMs);
        return () => lock.release();
      } catch (e) {
        if (e instanceof ExecutionError) return null;
        throw e;
      }
    };
  }
  if (options.peer === 'semaphore') {
    const {Mutex} = library('redis-semaphore');
    return async () => {
      // Its key is "mutex:" + the name: it cannot share locklab's key (docs/peers.md).
      const mutex = new Mutex(servers[0], options.key, {lockTimeout: options.ttlMs, acquireTimeout: options.waitMs,
                                                         retryInterval: options.retryMs});
      return (await mutex.tryAcquire()) ? () => mutex.release() : null;
    };
  }
  console.error(`node_worker.js: unknown --peer ${options.peer}`);
  process.exit(2);
}

const now = () => Number(process.hrtime.bigint() / 1000n);  // µs, monotonic

// Nearest rank, as bench/compare_peers/table.py computes it.
function percentile(sorted, q) {
  return sorted.length ? sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] : 0;
}

// Uncontended acquire + release until the deadline; one JSON line.
async function cycles(options, acquire) {
  const stats = {peer: options.peer, worker: options.worker, mode: 'cycles', cycles: 0, abandoned: 0, errors: 0,
                 release_failures: 0};
  const warmUp = await acquire();  // connections and scripts, outside the count
  if (!warmUp) throw new Error('the warm-up acquire of a free lock failed');
  await warmUp();
  const durations = [];
  await sleep(Math.max(0, options.start * 1000 - Date.now()));
  const deadline = now() + options.duration * 1e6;
  while (now() < deadline) {
    const began = now();
    let release;
    try {
      release = await acquire();
    } catch (e) {
      stats.errors += 1;
      continue;
    }
    if (!release) {
      stats.abandoned += 1;
      continue;
    }
    try {
      await release();
    } catch (e) {
      stats.release_failures += 1;
      continue;
    }
    durations.push(now() - began);
  }
  durations.sort((a, b) => a - b);
  Object.assign(stats, {cycles: durations.length, cycle_p50_us: percentile(durations, 0.50),
                        cycle_p99_us: percentile(durations, 0.99)});
  console.log(JSON.stringify(stats));
}

async function main() {
  const options = parse(process.argv);
  const servers = options.lock.split(',').map(client);
  await Promise.all(servers.map((c) => c.ping()));
  const acquire = lockerFor(options, servers);
  if (options.cycles) {
    await cycles(options, acquire);
    for (const c of servers) c.disconnect();
    return;
  }
  const counter = client(options.counter);
  await counter.ping();
  const stats = {peer: options.peer, worker: options.worker, acquired: 0, abandoned: 0, errors: 0,
                 release_failures: 0, waits_us: []};

  await sleep(Math.max(0, options.start * 1000 - Date.now()));
  const deadline = now() + options.duration * 1e6;
  let wanted = now();
  while (now() < deadline) {
    let release;
    try {
      release = await acquire();
    } catch (e) {
      stats.errors += 1;
      await sleep(options.retryMs);
      continue;
    }
    if (!release) {
      stats.abandoned += 1;
      continue;
    }
    stats.waits_us.push(now() - wanted);
    stats.acquired += 1;
    const value = Number(await counter.get(options.counterKey) || 0);
    await sleep(options.holdMs);
    await counter.set(options.counterKey, value + 1);
    try {
      await release();
    } catch (e) {
      stats.release_failures += 1;  // the lease ran out first
    }
    wanted = now();
  }
  console.log(JSON.stringify(stats));
  for (const c of [...servers, counter]) c.disconnect();
}

main().catch((e) => {
  console.error(`node_worker.js: ${e && e.message}`);
  process.exit(1);
});
