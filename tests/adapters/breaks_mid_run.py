#!/usr/bin/python3
"""A broken adapter for a whole run (tests/adapter_run_test.cpp). It locks with redis-py's
Lock like harness/adapters/python/redis_py.py, except as client 0, which answers init and
the probe's noops, then misbehaves at its first acquire, in the run. argv[1] says how:
not-json (prints a line that is not JSON), shape (an outcome that is no protocol word),
exit (exits with status 4), silent (never answers again, and ignores the end of its stdin
and SIGTERM)."""
import json
import signal
import sys
import time

import redis

mode, client, server, key, lock = sys.argv[1], None, None, None, None


def misbehave(request):
    if mode == "not-json":
        return "hello, I am not JSON"
    if mode == "shape":
        return json.dumps({"id": request["id"], "type": "acquire_ok", "outcome": "probably"})
    if mode == "exit":
        sys.exit(4)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(3600)


def handle(m):
    global client, server, key, lock
    if m["type"] == "init":
        s, client, key = m["servers"][0], m["client"], m["key"]
        server = redis.Redis(host=s["host"], port=s["port"])
        return {"type": "init_ok", "library": "breaks-mid-run", "version": "0", "language": "python",
                "capabilities": {"expires": True, "owner_checked_release": True}}
    if m["type"] == "noop":
        return {"type": "noop_ok"}
    if m["type"] == "acquire":
        lock = server.lock(key, timeout=m["ttl_ms"] / 1000, sleep=0.005, blocking_timeout=m["wait_ms"] / 1000)
        return {"type": "acquire_ok", "outcome": "acquired" if lock.acquire() else "timed_out"}
    lock.release()
    return {"type": "release_ok", "outcome": "released"}


for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "acquire" and client == 0:
        print(misbehave(request), flush=True)
        continue
    print(json.dumps({"id": request["id"], **handle(request)}), flush=True)
