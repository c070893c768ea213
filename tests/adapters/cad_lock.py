#!/usr/bin/python3
"""A correct lock of a user's own (tests/user_adapter_test.cpp, issue 26): SET NX PX with a
token, and a release that is one compare-and-delete script, so a late release deletes nothing
of the next holder's. The script carries the word cad_release, which the test catalog's
release_window (resp:EVAL~cad_release) names: the matrix parks the release's EVAL there. With
--declare, its init_ok declares that release_window itself, as an adapter no catalog declares may. With --lease-times N, its
key's TTL is N times the ttl it is given: a lease no jump of a few ttls outlives."""
import sys
import time
import uuid

import redis

from serve_lock import serve

RELEASE = """-- cad_release
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0"""


class CompareAndDelete:
    def __init__(self, server, key, ttl_ms):
        self.lease_times = int(sys.argv[sys.argv.index("--lease-times") + 1]) if "--lease-times" in sys.argv else 1
        self.client = redis.Redis(host=server["host"], port=server["port"], socket_timeout=2)
        self.key = key
        self.token = None

    def acquire(self, ttl_ms, wait_ms, retry_ms):
        token = uuid.uuid4().hex
        deadline = time.monotonic() + wait_ms / 1000.0
        while True:
            try:
                if self.client.set(self.key, token, nx=True, px=ttl_ms * self.lease_times):
                    self.token = token
                    return "acquired"
            except redis.RedisError:
                return "unknown"
            if time.monotonic() >= deadline:
                return "timed_out"
            time.sleep(retry_ms / 1000.0)

    def release(self):
        if self.token is None:
            return "already_expired"
        token, self.token = self.token, None
        try:
            return "released" if self.client.eval(RELEASE, 1, self.key, token) == 1 else "not_owner"
        except redis.RedisError:
            return "error"


if __name__ == "__main__":
    # --declare-badly: a step point that is no resp:PATTERN (a usage error, as in a catalog).
    window = "resp:EVAL~cad_release" if "--declare" in sys.argv[1:] else "EVAL~cad_release"
    serve(CompareAndDelete, "team-cad", {"expires": True, "owner_checked_release": True},
          {"release_window": window} if {"--declare", "--declare-badly"} & set(sys.argv[1:]) else None)
