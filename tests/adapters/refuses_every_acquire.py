#!/usr/bin/python3
"""A broken lock: every acquire answers `error`, before any fault as under one
(tests/user_adapter_test.cpp). Under node-minority its cell must read `error`,
never `liveness`: a lock that could not acquire before the fault is broken, not
made unavailable by it (sweeps/matrix.cpp, refused_under_its_fault)."""
import os
import sys

KIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "adapters", "kits", "python")
sys.path.insert(0, os.environ.get("LOCKLAB_KIT", KIT))
import locklab_kit as kit  # noqa: E402


class Refuser:
    library, version = "refuser", "1"
    capabilities = {"expires": True, "owner_checked_release": True, "multi_node": True}
    def init(self, m):
        return {"key": m["key"]}
    def acquire(self, m):
        return "error"
    def release(self, m):
        return "already_expired"


kit.serve(Refuser())
