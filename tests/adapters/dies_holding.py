#!/usr/bin/python3
"""An adapter whose service dies mid-run (tests/adapter_run_test.cpp, AdapterDiesMidRun): a
correct lock (SET NX PX with a token, compare-and-delete), except that client 0 raises an
uncaught exception at its first release, while it holds the lock, as a Node service dies on
an unhandled rejection. Its hold stays until the TTL; the other clients go on. argv[1]: a marker."""
import json
import sys
import time
import uuid

import redis

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
server, client, key, token = None, None, None, None


def acquire(m):
    global token
    token = uuid.uuid4().hex
    end = time.monotonic() + m["wait_ms"] / 1000
    while not server.set(key, token, nx=True, px=m["ttl_ms"]):
        if time.monotonic() >= end:
            return "timed_out"
        time.sleep(m.get("retry_ms", 5) / 1000)
    return "acquired"


def handle(m):
    global server, client, key
    if m["type"] == "init":
        s, client, key = m["servers"][0], m["client"], m["key"]
        server = redis.Redis(host=s["host"], port=s["port"])
        return {"type": "init_ok", "library": "dies-holding", "version": "0", "language": "python",
                "capabilities": {"expires": True, "owner_checked_release": True}}
    if m["type"] == "noop":
        return {"type": "noop_ok"}
    if m["type"] == "acquire":
        return {"type": "acquire_ok", "outcome": acquire(m)}
    if client == 0:
        raise RuntimeError("the refresh was refused")
    released = server.eval(RELEASE, 1, key, token)
    return {"type": "release_ok", "outcome": "released" if released == 1 else "not_owner"}


for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], **handle(request)}), flush=True)
