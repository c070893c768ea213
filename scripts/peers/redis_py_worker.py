#!/usr/bin/python3
"""One compare-peers worker: redis-py's Lock through locklab's workload.

Loop until the deadline: acquire (bounded by --wait-ms, polling every
--retry-ms), GET counter, sleep --hold-ms, SET counter+1, release. Prints one
JSON line: per-worker counts and every acquisition's wait (µs from wanting the
lock, across abandoned attempts, to holding it).

redis-py's Lock is SET key token NX PX ttl + a Lua compare-and-delete: the same
wire protocol as locklab's lua-safe-delete, so both may share a key
(tests/peers_fleet_test.cpp, docs/peers.md).
"""
import argparse
import json
import sys
import time

import redis


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lock", required=True, help="HOST:PORT of the lock server")
    p.add_argument("--counter", required=True, help="HOST:PORT of the counter server")
    p.add_argument("--key", default="locklab:lock")
    p.add_argument("--counter-key", default="locklab:counter")
    p.add_argument("--hold-ms", type=float, default=1)
    p.add_argument("--ttl-ms", type=int, default=2000)
    p.add_argument("--wait-ms", type=int, default=1000)
    p.add_argument("--retry-ms", type=float, default=5)
    p.add_argument("--start", type=float, required=True, help="epoch seconds to start at")
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--worker", type=int, default=0)
    a = p.parse_args()

    def connect(address):
        host, port = address.rsplit(":", 1)
        return redis.Redis(host=host, port=int(port))

    lock_server, counter_server = connect(a.lock), connect(a.counter)
    lock_server.ping()
    counter_server.ping()
    lock = lock_server.lock(a.key, timeout=a.ttl_ms / 1000, sleep=a.retry_ms / 1000,
                            blocking_timeout=a.wait_ms / 1000)
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
