#!/usr/bin/python3
"""An auto-extending lock with a blind release (tests/bite_test.cpp, issue 25): SET NX PX
with a token, a watchdog thread that renews the lease every ttl/3 while held, and a release
that is a plain DEL, whoever holds the key then. Renewals keep a slow holder's lease, so a
pause shorter than the renewed lease never lets a contender in; only a schedule that waits
until the lease has lapsed and another client is inside shows what the DEL does: it deletes
the new holder's key (a wrong-owner release), and the next acquire walks in beside it.
Always answers `released`: what the lock says is not evidence."""
import threading
import time
import uuid

import redis

from serve_lock import serve


class WatchdogBlindDel:
    def __init__(self, server, key, ttl_ms):
        self.client = redis.Redis(host=server["host"], port=server["port"], socket_timeout=2)
        self.key = key
        self.ttl_ms = ttl_ms
        self.token = None
        self.stop = threading.Event()
        self.thread = None

    def acquire(self, ttl_ms, wait_ms, retry_ms):
        self.ttl_ms = ttl_ms
        token = uuid.uuid4().hex
        deadline = time.monotonic() + wait_ms / 1000.0
        while True:
            if self.client.set(self.key, token, nx=True, px=ttl_ms):
                self.token = token
                self.stop.clear()
                self.thread = threading.Thread(target=self.renew, args=(token,), daemon=True)
                self.thread.start()
                return "acquired"
            if time.monotonic() >= deadline:
                return "timed_out"
            time.sleep(retry_ms / 1000.0)

    def renew(self, token):
        while not self.stop.wait(self.ttl_ms / 3000.0):
            try:
                self.client.pexpire(self.key, self.ttl_ms)  # blind too: whoever holds it now
            except redis.RedisError:
                pass

    def release(self):
        self.stop.set()
        self.client.delete(self.key)  # the blind DEL: no owner check
        self.token = None
        return "released"


if __name__ == "__main__":
    serve(WatchdogBlindDel, "watchdog-blind-del", {"expires": True, "auto_extends": True})
