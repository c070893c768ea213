#!/usr/bin/python3
"""An auto-extending lock whose watchdog is a process in a session of its own (issue 25, "the
fault reaches the whole client"; tests/adapter_run_test.cpp): SET NX PX with a token, then a
forked child that calls setsid() and renews the lease (PEXPIRE, only while the token is still
ours) every ttl/3 until release kills it. A pause sent to the client's process group misses
that watchdog: the lease never lapses, a contender never gets in, the run looks safe. Frozen
with its client (a cgroup), the lease lapses and the next client walks in beside the holder.
Run it as `sh -c 'setsid python3 setsid_watchdog.py; :'` to put the adapter itself out of the
group too. Extra arguments are ignored (a marker for the test)."""
import os
import signal
import time
import uuid

import redis

from serve_lock import serve

RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


def watchdog(server, key, token, ttl_ms, parent):
    """In the forked child: its own session, renewing until the key is not ours or the adapter is gone."""
    os.setsid()
    client = redis.Redis(host=server["host"], port=server["port"], socket_timeout=2)
    while os.getppid() == parent:
        time.sleep(ttl_ms / 3000.0)
        try:
            if client.eval(RENEW, 1, key, token, ttl_ms) != 1:
                break
        except redis.RedisError:
            pass
    os._exit(0)


class SetsidWatchdog:
    def __init__(self, server, key):
        self.server = server
        self.client = redis.Redis(host=server["host"], port=server["port"], socket_timeout=2)
        self.key = key
        self.token = None
        self.watchdog = None

    def acquire(self, ttl_ms, wait_ms, retry_ms):
        token = uuid.uuid4().hex
        deadline = time.monotonic() + wait_ms / 1000.0
        while not self.client.set(self.key, token, nx=True, px=ttl_ms):
            if time.monotonic() >= deadline:
                return "timed_out"
            time.sleep(retry_ms / 1000.0)
        self.token = token
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            watchdog(self.server, self.key, token, ttl_ms, parent)
        self.watchdog = pid
        return "acquired"

    def release(self):
        if self.watchdog is not None:
            os.kill(self.watchdog, signal.SIGKILL)
            os.waitpid(self.watchdog, 0)
            self.watchdog = None
        deleted = self.client.eval(RELEASE, 1, self.key, self.token or "")
        self.token = None
        return "released" if deleted == 1 else "already_expired"


if __name__ == "__main__":
    serve(lambda server, key, ttl_ms: SetsidWatchdog(server, key), "setsid-watchdog",
          {"expires": True, "auto_extends": True})
