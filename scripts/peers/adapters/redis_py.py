#!/usr/bin/python3
"""locklab adapter (docs/adapters.md): redis-py's Lock, JSON lines on stdin/stdout."""
import json
import sys

import redis

CAPABILITIES = {"expires": True, "owner_checked_release": True, "reentrant": False, "auto_extends": False}
server, key, lock = None, None, None


def handle(m):
    global server, key, lock
    if m["type"] == "init":
        s = m["servers"][0]
        server, key = redis.Redis(host=s["host"], port=s["port"]), m["key"]
        return {"type": "init_ok", "library": "redis-py", "version": redis.__version__,
                "language": "python", "capabilities": CAPABILITIES}
    if m["type"] == "noop":
        return {"type": "noop_ok"}
    if m["type"] == "acquire":
        lock = server.lock(key, timeout=m["ttl_ms"] / 1000, sleep=0.005, blocking_timeout=m["wait_ms"] / 1000)
        try:
            return {"type": "acquire_ok", "outcome": "acquired" if lock.acquire() else "timed_out"}
        except redis.RedisError as e:  # sent, no answer: we may hold it
            return {"type": "acquire_ok", "outcome": "unknown", "error": repr(e)}
    try:
        (lock or server.lock(key)).release()  # type == "release"
        return {"type": "release_ok", "outcome": "released"}
    except redis.exceptions.LockNotOwnedError as e:
        return {"type": "release_ok", "outcome": "not_owner", "error": str(e)}
    except redis.exceptions.LockError as e:  # no token held: nothing to release
        return {"type": "release_ok", "outcome": "already_expired", "error": str(e)}
    except redis.RedisError as e:
        return {"type": "release_ok", "outcome": "error", "error": repr(e)}


for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request.get("id"), **handle(request)}), flush=True)
