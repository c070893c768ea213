#!/usr/bin/env python3
"""locklab adapter (docs/adapters.md): python-redis-lock's Lock with auto_renewal=True, as its README
shows, on the Python kit (harness/adapters/kits/python). Runs on build/venv's python, where
harness/adapters/kits/python/install puts the pinned library (requirements.txt).

What the library's source decides (redis_lock/__init__.py of 4.0.1; docs/peers.md, "The Python rows"):
- the key is "lock:" + name (:166); acquire is SET NX EX expire (:232), expire in whole seconds
  (int(expire), :147): the row's lease is the ttl rounded up to a second (catalog: ttl_resolution_ms).
- a waiter sleeps in BLPOP on "lock-signal:" + name, which only a release pushes (:25, :237), and its
  timeout (int seconds, :221) bounds each BLPOP, not the acquire: the kit bounds the acquire (the
  adapter's take(): the wait, then 1 s of grace for an attempt on its way, whose win is kept, as in every
  kit; then `unknown` with blocked_ms), and a win after `unknown` is given back (give_back).
- auto_renewal: a daemon thread extends the key to `expire` every expire*2/3 s (:168, :278-284); an
  extension that fails raises in that thread, which ends, telling nobody (no `lost`).
- release stops the renewal thread, then one compare-and-delete script (:20-30, :347-352); its
  NotAcquired covers a key gone and another's value alike: `not_owner`.
"""
import math
import os
import sys

import redis
import redis_lock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kits", "python"))
import locklab_kit as kit  # noqa: E402  (the kit's folder first)


def whole_seconds(s):
    return max(1, math.ceil(s))  # the library truncates to int: 0.5 s would be no expiry at all


class PythonRedisLock:
    library, version = "python-redis-lock", redis_lock.__version__
    capabilities = {"expires": True, "owner_checked_release": True, "reentrant": False, "fencing": False,
                    "multi_node": False, "notifies_waiters": True, "auto_extends": True}
    server, key, held = None, None, None  # held: the kit's, the last win (locklab_kit.py, take)

    def init(self, m):
        self.server, self.key = redis.Redis(host=m["servers"][0]["host"], port=m["servers"][0]["port"]), m["key"]
        return {"key": "lock:" + self.key}

    def take(self, m):  # the hold, or None (timed_out: the kit keeps the hold we have); a RedisError is `unknown`
        attempt = redis_lock.Lock(self.server, self.key, expire=whole_seconds(kit.ttl_s(m)), auto_renewal=True)
        won = attempt.acquire(blocking=False) if m["wait_ms"] == 0 else attempt.acquire(timeout=whole_seconds(kit.wait_s(m)))
        return attempt if won else None

    def give_back(self, hold):  # a win after the kit answered `unknown`
        hold.release()

    def release(self, m):  # a RedisError is `error` (the kit), as for extend
        return self.ended(lambda held: held.release(), "released")

    def extend(self, m):
        return self.ended(lambda held: held.extend(expire=whole_seconds(kit.ttl_s(m))), "extended")

    def ended(self, call, word):
        try:
            call(self.held or redis_lock.Lock(self.server, self.key))  # never acquired: a random id, not ours
            return word
        except redis_lock.NotAcquired as e:
            return {"outcome": "not_owner", "error": str(e)}


kit.serve(PythonRedisLock())
