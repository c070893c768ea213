#!/usr/bin/python3
"""A lock with a hold nobody acquired (tests/adapter_run_test.cpp, GhostHoldAfterARestart): SET NX PX
with a token and a compare-and-delete release, but an attempt that failed on a Redis error is sent
again before the next one, its result dropped, as a client library's offline queue does for a call
that already gave up (simple-redis-mutex on node-redis, docs/peers.md). After the server restarts
empty, that replay wins the key for nobody, and every client is kept out for a whole lease: the
run must not read plainly safe."""
import uuid

import redis

from serve_lock import serve

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


class GhostAfterError:
    def __init__(self, server, key, ttl_ms):
        self.client = redis.Redis(host=server["host"], port=server["port"], socket_timeout=2)
        self.key, self.token, self.queued = key, None, None

    def acquire(self, ttl_ms, wait_ms, retry_ms):
        token = uuid.uuid4().hex
        try:
            if self.queued:  # the failed attempt, replayed; nobody waits for its answer
                self.client.set(self.key, self.queued, nx=True, px=ttl_ms)
                self.queued = None
            if self.client.set(self.key, token, nx=True, px=ttl_ms):
                self.token = token
                return "acquired"
            return "timed_out"
        except redis.RedisError:
            self.queued = token
            return "unknown"

    def release(self):
        token, self.token = self.token, None
        if token is None:
            return "already_expired"
        try:
            return "released" if self.client.eval(RELEASE, 1, self.key, token) == 1 else "not_owner"
        except redis.RedisError:
            return "error"


if __name__ == "__main__":
    serve(GhostAfterError, "team-ghost", {"expires": True, "owner_checked_release": True})
