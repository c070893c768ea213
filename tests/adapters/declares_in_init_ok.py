#!/usr/bin/python3
"""A compare-and-delete lock on a key of its own, `team:` + the run's key, that says so only in its
init_ok (tests/user_adapter_test.cpp): `key`, and the capability words given with --claim WORD (as
many as asked), so a test can see which of them fleets and the matrix read. Its release is one EVAL."""
import os
import sys
import uuid

import redis  # Debian's python3-redis

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "adapters", "kits", "python"))
import locklab_kit as kit  # noqa: E402

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
CLAIMS = [sys.argv[i + 1] for i, word in enumerate(sys.argv[:-1]) if word == "--claim"]


class DeclaresInInitOk:
    library, version = "declares-in-init-ok", "1"
    capabilities = {"expires": True, "owner_checked_release": True, **{word: True for word in CLAIMS}}
    def init(self, m):
        self.server, self.key, self.token = redis.Redis(**m["servers"][0], socket_timeout=1), "team:" + m["key"], None
        return {"key": self.key, "release_window": "resp:EVAL"}
    def acquire(self, m):
        token, deadline = uuid.uuid4().hex, kit.Deadline(m["wait_ms"])
        while not self.server.set(self.key, token, nx=True, px=m["ttl_ms"]):
            if deadline.passed():
                return "timed_out"
            deadline.sleep(kit.retry_s(m))
        self.token = token
        return "acquired"
    def release(self, m):
        token, self.token = self.token, None
        return "released" if token and self.server.eval(RELEASE, 1, self.key, token) == 1 else "already_expired"


kit.serve(DeclaresInInitOk())
