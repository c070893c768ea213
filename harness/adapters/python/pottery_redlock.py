#!/usr/bin/env python3
"""locklab adapter (docs/adapters.md): pottery's Redlock, as its README shows it (masters: a set of Redis
clients, "in production, you should have 5 Redis masters"): one client per server the run gives it
(5 in the matrix), on the Python kit (harness/adapters/kits/python). Runs on build/venv's python, where
harness/adapters/kits/python/install puts the pinned library (requirements.txt).

What the library's source decides (pottery/redlock.py of 3.0.1; docs/peers.md, "The Python rows"):
- the key is "redlock:" + key (base.py:322); an attempt is SET NX PX auto_release_time on every master
  in a thread pool (:278-285, :318-352), held at a majority while the validity (auto_release_time less
  drift and elapsed, perf_counter) is ahead; a failed attempt runs the release script on every master
  (:350-351) and sleeps uniform(0, 0.2) s (:423) before the next, until `timeout` (:417), checked only
  between attempts: the kit bounds the call (the adapter's take(): the wait, then 1 s of grace for an
  attempt on its way, whose win is kept, as in every kit; then `unknown` with blocked_ms), and a win
  after `unknown` is given back (give_back).
- nothing renews it: extend() is the caller's, at most num_extensions (3) times (:503-553).
- release is the compare-and-delete script on every master (:136-150, :555-600), done at a majority;
  ReleaseUnlockedLock otherwise: `error` when masters raised (a vote that never left), else `not_owner`.
"""
import os
import sys
from importlib.metadata import version

import pottery
import redis

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kits", "python"))
import locklab_kit as kit  # noqa: E402  (the kit's folder first)


class PotteryRedlock:
    library, version = "pottery", version("pottery")  # pottery has no __version__
    capabilities = {"expires": True, "owner_checked_release": True, "reentrant": False, "fencing": False,
                    "multi_node": True, "notifies_waiters": False, "auto_extends": False}
    masters, key, held = None, None, None  # held: the kit's, the last win (locklab_kit.py, take)

    def init(self, m):
        self.masters, self.key = {redis.Redis(host=s["host"], port=s["port"]) for s in m["servers"]}, m["key"]
        return {"key": "redlock:" + self.key}

    def take(self, m):  # the hold, or None (timed_out: the kit keeps the hold we have); a RedisError is `unknown`
        attempt = pottery.Redlock(key=self.key, masters=self.masters, auto_release_time=kit.ttl_s(m))
        won = attempt.acquire(blocking=False) if m["wait_ms"] == 0 else attempt.acquire(timeout=kit.wait_s(m))
        return attempt if won else None

    def give_back(self, hold):  # a win after the kit answered `unknown`
        hold.release()

    def release(self, m):  # a RedisError is `error` (the kit), as for extend
        return self.ended(lambda held: held.release(), "released")

    def extend(self, m):
        def extend_to(held):
            held.auto_release_time = kit.ttl_s(m)  # extend() re-sets the lease to auto_release_time (:298-305)
            held.extend()
        return self.ended(extend_to, "extended")

    def ended(self, call, word):
        held = self.held or pottery.Redlock(key=self.key, masters=self.masters)  # never acquired: not ours
        try:
            call(held)
            return word
        except (pottery.ReleaseUnlockedLock, pottery.ExtendUnlockedLock) as e:
            if e.redis_errors:  # masters that did not answer: what they hold is unknown
                return {"outcome": "error", "error": "%r: %r" % (e, list(e.redis_errors))}
            return {"outcome": "not_owner", "error": repr(e)}
        except pottery.TooManyExtensions as e:  # the library's limit of 3 extensions (:523-524)
            return {"outcome": "error", "error": repr(e)}


kit.serve(PotteryRedlock())
