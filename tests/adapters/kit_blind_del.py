#!/usr/bin/python3
"""A blind-DEL lock on the Python kit (tests/kit_locks_test.cpp): SET NX PX with a token, release = plain DEL."""
import os
import sys
import uuid

import redis  # Debian's python3-redis

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "adapters", "kits", "python"))
import locklab_kit as kit  # noqa: E402


class KitBlindDel:
    library, version, capabilities = "kit-blind-del-py", "1", {"expires": True}
    def init(self, m):
        self.server, self.key = redis.Redis(**m["servers"][0], socket_timeout=1), m["key"]
        return {"key": self.key}
    def acquire(self, m):
        token, deadline = uuid.uuid4().hex, kit.Deadline(m["wait_ms"])
        while not self.server.set(self.key, token, nx=True, px=m["ttl_ms"]):
            if deadline.passed():
                return "timed_out"
            deadline.sleep(kit.retry_s(m))
        return "acquired"
    def release(self, m):  # the blind DEL: whoever holds the key now loses it
        self.server.delete(self.key)
        return "released"


kit.serve(KitBlindDel())
