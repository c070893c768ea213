#!/usr/bin/python3
"""An adapter whose service dies inside its section (tests/adapter_run_test.cpp,
AdapterDiesInTheSection): a correct renewing lock (SET NX PX with a token, a watchdog that
extends it every ttl/3, compare-and-delete), except that the first client to get the lock
(whoever wins a SET NX of a key named by the marker) dies of an uncaught error 50 ms after,
watchdog and all. Its key then expires and a
contender enters; the client must crash there, not write the counter at the end of its hold.
argv[1]: a marker."""
import json
import os
import sys
import threading
import time
import uuid

import redis

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
EXTEND = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
server, client, key, token, held = None, None, None, None, threading.Event()


def watchdog(mine, ttl_ms):
    while held.is_set() and token == mine:
        time.sleep(ttl_ms / 3000)
        if held.is_set() and token == mine:
            redis.Redis(connection_pool=server.connection_pool).eval(EXTEND, 1, key, mine, ttl_ms)


def die():
    time.sleep(0.05)
    sys.stderr.write("Traceback (most recent call last):\nRuntimeError: the watchdog's connection died\n")
    sys.stderr.flush()
    os._exit(1)


def acquire(m):
    global token
    token = uuid.uuid4().hex
    end = time.monotonic() + m["wait_ms"] / 1000
    while not server.set(key, token, nx=True, px=m["ttl_ms"]):
        if time.monotonic() >= end:
            return "timed_out"
        time.sleep(m.get("retry_ms", 5) / 1000)
    held.set()
    threading.Thread(target=watchdog, args=(token, m["ttl_ms"]), daemon=True).start()
    if server.set(f"{key}:dies:{sys.argv[1]}", 1, nx=True, px=60000):
        threading.Thread(target=die, daemon=True).start()
    return "acquired"


def handle(m):
    global server, client, key
    if m["type"] == "init":
        s, client, key = m["servers"][0], m["client"], m["key"]
        server = redis.Redis(host=s["host"], port=s["port"])
        return {"type": "init_ok", "library": "dies-renewing", "version": "0", "language": "python",
                "capabilities": {"expires": True, "owner_checked_release": True, "renews": True}}
    if m["type"] == "noop":
        return {"type": "noop_ok"}
    if m["type"] == "acquire":
        return {"type": "acquire_ok", "outcome": acquire(m)}
    held.clear()
    released = server.eval(RELEASE, 1, key, token)
    return {"type": "release_ok", "outcome": "released" if released == 1 else "not_owner"}


for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], **handle(request)}), flush=True)
