#!/usr/bin/python3
"""One compare-peers worker: redis-py's Lock through locklab's workload.

Loop until the deadline: acquire (bounded by --wait-ms, polling every
--retry-ms), GET counter, sleep --hold-ms, SET counter+1, release. Prints one
JSON line: per-worker counts and every acquisition's wait (µs from wanting the
lock, across abandoned attempts, to holding it).

With --cycles (the uncontended row): no counter, no hold, just acquire +
release until the deadline, after one warm-up cycle outside the count (it
loads the release script). Prints cycles and the per-cycle latency p50/p99.

redis-py's Lock is SET key token NX PX ttl + a Lua compare-and-delete: the same
wire protocol as locklab's lua-safe-delete, so both may share a key
(tests/peers_fleet_test.cpp, docs/peers.md).
"""
import argparse
import json
import math
import sys
import time

import redis


def percentile(sorted_values, q):
    """Nearest rank, as bench/compare_peers/table.py computes it."""
    if not sorted_values:
        return 0
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def connect(address):
    host, port = address.rsplit(":", 1)
    return redis.Redis(host=host, port=int(port))


def cycles(a, lock):
    """Uncontended acquire + release until the deadline; one JSON line."""
    stats = {"peer": "redis-py", "worker": a.worker, "mode": "cycles", "cycles": 0, "abandoned": 0, "errors": 0,
             "release_failures": 0}
    lock.acquire()  # warm-up: connects and loads the release script
    lock.release()
    durations = []
    time.sleep(max(0.0, a.start - time.time()))
    deadline = time.monotonic() + a.duration
    while time.monotonic() < deadline:
        began = time.monotonic()
        try:
            if not lock.acquire():
                stats["abandoned"] += 1
                continue
            lock.release()
        except redis.exceptions.LockError:
            stats["release_failures"] += 1
            continue
        except redis.RedisError:
            stats["errors"] += 1
            continue
        durations.append((time.monotonic() - began) * 1e6)
    durations.sort()
    stats.update(cycles=len(durations), cycle_p50_us=round(percentile(durations, 0.50), 1),
                 cycle_p99_us=round(percentile(durations, 0.99), 1))
    print(json.dumps(stats))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lock", required=True, help="HOST:PORT of the lock server")
    p.add_argument("--counter", help="HOST:PORT of the counter server (not with --cycles)")
    p.add_argument("--key", default="locklab:lock")
    p.add_argument("--counter-key", default="locklab:counter")
    p.add_argument("--hold-ms", type=float, default=1)
    p.add_argument("--ttl-ms", type=int, default=2000)
    p.add_argument("--wait-ms", type=int, default=1000)
    p.add_argument("--retry-ms", type=float, default=5)
    p.add_argument("--start", type=float, required=True, help="epoch seconds to start at")
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--worker", type=int, default=0)
    p.add_argument("--cycles", action="store_true", help="uncontended: acquire + release only, no counter, no hold")
    a = p.parse_args()
    if not a.cycles and not a.counter:
        p.error("--counter is required (except with --cycles)")

    lock_server = connect(a.lock)
    lock_server.ping()
    lock = lock_server.lock(a.key, timeout=a.ttl_ms / 1000, sleep=a.retry_ms / 1000,
                            blocking_timeout=a.wait_ms / 1000)
    if a.cycles:
        return cycles(a, lock)
    counter_server = connect(a.counter)
    counter_server.ping()
    stats = {"peer": "redis-py", "worker": a.worker, "acquired": 0, "abandoned": 0, "errors": 0,
             "release_failures": 0, "waits_us": []}

    time.sleep(max(0.0, a.start - time.time()))
    deadline = time.monotonic() + a.duration
    wanted = time.monotonic()
    while time.monotonic() < deadline:
        try:
            got = lock.acquire()
        except redis.RedisError:
            stats["errors"] += 1
            time.sleep(a.retry_ms / 1000)
            continue
        if not got:
            stats["abandoned"] += 1
            continue
        stats["waits_us"].append(int((time.monotonic() - wanted) * 1e6))
        stats["acquired"] += 1
        value = int(counter_server.get(a.counter_key) or 0)
        time.sleep(a.hold_ms / 1000)
        counter_server.set(a.counter_key, value + 1)
        try:
            lock.release()
        except redis.exceptions.LockError:
            stats["release_failures"] += 1  # the lease ran out first
        wanted = time.monotonic()
    print(json.dumps(stats))


if __name__ == "__main__":
    sys.exit(main())
