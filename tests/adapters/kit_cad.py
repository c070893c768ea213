#!/usr/bin/python3
"""A correct lock on the Python kit (tests/kit_locks_test.cpp): SET NX PX with a token, compare-and-delete release."""
import os
import sys
import uuid

import redis  # Debian's python3-redis

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "adapters", "kits", "python"))
import locklab_kit as kit  # noqa: E402

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


class KitCad:
    library, version, capabilities = "kit-cad-py", "1", {"expires": True, "owner_checked_release": True}
    def init(self, m):
        self.server, self.key, self.token = redis.Redis(**m["servers"][0], socket_timeout=1), m["key"], None
        return {"key": self.key}
    def acquire(self, m):
        token, deadline = uuid.uuid4().hex, kit.Deadline(m["wait_ms"])
        while not self.server.set(self.key, token, nx=True, px=m["ttl_ms"]):
            if deadline.passed():
                return "timed_out"
            deadline.sleep(kit.retry_s(m))
        self.token = token
        return "acquired"
    def release(self, m):  # one EVAL: a late release deletes nothing of the next holder's
        token, self.token = self.token, None
        return "released" if token and self.server.eval(RELEASE, 1, self.key, token) == 1 else "already_expired"


kit.serve(KitCad())
