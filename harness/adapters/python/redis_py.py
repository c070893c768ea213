#!/usr/bin/python3
"""locklab adapter (docs/adapters.md): redis-py's Lock, on the Python kit (harness/adapters/kits/python)."""
import os
import sys

import redis  # Debian's python3-redis

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kits", "python"))
import locklab_kit as kit  # noqa: E402  (the kit's folder first)


class RedisPy:
    library, version = "redis-py", redis.__version__
    capabilities = {"expires": True, "owner_checked_release": True, "reentrant": False, "fencing": False,
                    "multi_node": False, "notifies_waiters": False, "auto_extends": False}
    server, key, lock = None, None, None
    def init(self, m):
        self.server, self.key = redis.Redis(host=m["servers"][0]["host"], port=m["servers"][0]["port"]), m["key"]
        return {"key": self.key}
    def acquire(self, m):  # a failed attempt keeps the hold we have; a RedisError is `unknown` (the kit)
        attempt = self.server.lock(self.key, timeout=kit.ttl_s(m), sleep=kit.retry_s(m),  # the run's --retry
                                   blocking_timeout=kit.wait_s(m))
        self.lock = attempt if attempt.acquire() else self.lock
        return "acquired" if self.lock is attempt else "timed_out"
    def release(self, m):  # a RedisError is `error` (the kit), as for extend
        return self.ended(lambda held: held.release(), "released")
    def extend(self, m):
        return self.ended(lambda held: held.extend(kit.ttl_s(m), replace_ttl=True), "extended")
    def ended(self, call, word):
        try:
            call(self.lock or self.server.lock(self.key))
            return word
        except redis.exceptions.LockNotOwnedError as e:
            return {"outcome": "not_owner", "error": str(e)}
        except redis.exceptions.LockError as e:  # no token held: nothing to release, or to extend
            return {"outcome": "already_expired" if word == "released" else "not_owner", "error": str(e)}


kit.serve(RedisPy())
