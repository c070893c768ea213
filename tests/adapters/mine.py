#!/usr/bin/python3
"""My own lock (docs/adapters.md, "Your own lock in 10 minutes"): SET NX PX, then compare-and-delete."""
import os
import sys
import uuid

import redis  # the library this adapter drives: Debian's python3-redis

KIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "adapters", "kits", "python")
sys.path.insert(0, os.environ.get("LOCKLAB_KIT", KIT))  # LOCKLAB_KIT: where the kit is, for a copy of this file
import locklab_kit as kit  # noqa: E402

# Delete the key only if it still holds our token: a late release cannot free the next holder's lock.
RELEASE = ("local v = redis.call('get', KEYS[1]) if v == ARGV[1] then return redis.call('del', KEYS[1]) end"
           " if v then return -1 end return 0")  # 1: ours, deleted; -1: another's value; 0: no key (expired)


class Mine:
    library, version, capabilities = "mine", "1", {"expires": True, "owner_checked_release": True}
    def init(self, m):
        self.server, self.key, self.token = redis.Redis(**m["servers"][0], socket_timeout=1), m["key"], None
        self.script = self.server.register_script(RELEASE)
        return {"key": self.key}  # the key we hold: the harness reads, watches and cleans it
    def acquire(self, m):  # a Redis error here is `unknown` (the kit): the SET may have landed
        token, deadline = uuid.uuid4().hex, kit.Deadline(m["wait_ms"])
        while not self.server.set(self.key, token, nx=True, px=m["ttl_ms"]):
            if deadline.passed():  # wait_ms 0: exactly one attempt
                return "timed_out"
            deadline.sleep(kit.retry_s(m))  # not time.sleep: the Deadline counts its time in steps
        self.token = token
        return "acquired"
    def release(self, m):  # a Redis error here is `error` (the kit): we cannot tell what happened
        token, self.token = self.token, None
        if token is None:
            return "already_expired"
        return {1: "released", 0: "already_expired"}.get(self.script(keys=[self.key], args=[token]), "not_owner")


kit.serve(Mine())
