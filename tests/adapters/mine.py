#!/usr/bin/python3
"""My own lock (docs/adapters.md, "Your own lock in 10 minutes"): SET NX PX, then compare-and-delete."""
import os
import sys
import time
import uuid

import redis  # the library this adapter drives: Debian's python3-redis

KIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "adapters", "kits", "python")
sys.path.insert(0, os.environ.get("LOCKLAB_KIT", KIT))  # LOCKLAB_KIT: where the kit is, for a copy of this file
import locklab_kit as kit  # noqa: E402

# Delete the key only if it still holds our token: a late release cannot free the next holder's lock.
RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


class Mine:
    library, version, capabilities = "mine", "1", {"expires": True, "owner_checked_release": True}
    def init(self, m):
        self.server, self.key, self.token = redis.Redis(**m["servers"][0]), m["key"], None
        self.script = self.server.register_script(RELEASE)
        return {"key": self.key}  # the key we hold: the harness reads, watches and cleans it
    def acquire(self, m):  # a Redis error here is `unknown` (the kit): the SET may have landed
        token, deadline = uuid.uuid4().hex, kit.Deadline(m["wait_ms"])
        while not self.server.set(self.key, token, nx=True, px=m["ttl_ms"]):
            if deadline.passed():  # wait_ms 0: exactly one attempt
                return "timed_out"
            time.sleep(kit.retry_s(m))
        self.token = token
        return "acquired"
    def release(self, m):  # a Redis error here is `error` (the kit): we cannot tell what happened
        token, self.token = self.token, None
        if token is None:
            return "already_expired"
        return "released" if self.script(keys=[self.key], args=[token]) == 1 else "not_owner"


kit.serve(Mine())
