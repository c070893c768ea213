#!/usr/bin/python3
"""Locks nothing: answers every acquire with `error` naming the request's retry_ms, so that
tests/adapter_lock_test.cpp sees what AdapterLock sent (docs/adapters.md, "The protocol")."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "adapters", "kits",
                                "python"))
import locklab_kit as kit  # noqa: E402


class RetryEcho:
    library, version, capabilities = "retry-echo", "0", {}

    def init(self, m):
        pass

    def acquire(self, m):
        return {"outcome": "error", "error": "retry_ms=%s" % m.get("retry_ms", "absent")}

    def release(self, m):
        return "already_expired"


kit.serve(RetryEcho())
