#!/usr/bin/python3
"""locklab adapter (docs/adapters.md): redis-py's Lock, JSON lines on stdin/stdout."""
import json
import sys

import redis  # Debian's python3-redis

CAPABILITIES = {"expires": True, "owner_checked_release": True, "reentrant": False, "fencing": False,
                "multi_node": False, "notifies_waiters": False, "auto_extends": False}
server, key, lock = None, None, None


def handle(m):
    global server, key, lock
    if m["type"] == "init":
        server, key = redis.Redis(host=m["servers"][0]["host"], port=m["servers"][0]["port"]), m["key"]
        return {"type": "init_ok", "library": "redis-py", "version": redis.__version__,
                "language": "python", "capabilities": CAPABILITIES, "key": key}
    if m["type"] == "noop":
        return {"type": "noop_ok"}
    reply, word = {"acquire": ("acquire_ok", "acquired"), "release": ("release_ok", "released"),
                   "extend": ("extend_ok", "extended")}[m["type"]]
    try:
        if m["type"] == "acquire":  # a failed attempt keeps the hold we have
            attempt = server.lock(key, timeout=m["ttl_ms"] / 1000, sleep=0.005, blocking_timeout=m["wait_ms"] / 1000)
            lock = attempt if attempt.acquire() else lock
            return {"type": reply, "outcome": word if lock is attempt else "timed_out"}
        held = lock or server.lock(key)
        held.extend(m["ttl_ms"] / 1000, replace_ttl=True) if m["type"] == "extend" else held.release()
        return {"type": reply, "outcome": word}
    except redis.exceptions.LockNotOwnedError as e:
        return {"type": reply, "outcome": "not_owner", "error": str(e)}
    except redis.exceptions.LockError as e:  # no token held: nothing to release, or to extend
        return {"type": reply, "outcome": "already_expired" if word == "released" else "not_owner", "error": str(e)}
    except redis.RedisError as e:  # sent, no answer: acquire may hold it; release, extend: unknown
        return {"type": reply, "outcome": "unknown" if word == "acquired" else "error", "error": repr(e)}


for request in map(json.loads, sys.stdin):
    print(json.dumps({"id": request.get("id"), **handle(request)}), flush=True)
