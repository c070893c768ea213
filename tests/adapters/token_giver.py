#!/usr/bin/python3
"""Locks nothing: every acquire is `acquired` with fencing_token 1, 2, 3, ... (with --no-token, none),
so that tests/adapter_lock_test.cpp sees what AdapterLock keeps of a token (docs/adapters.md,
acquire: `token_at_resource`)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "adapters", "kits",
                                "python"))
import locklab_kit as kit  # noqa: E402


class TokenGiver:
    library, version, capabilities = "token-giver", "0", {"fencing": True}

    def __init__(self, with_token):
        self.with_token, self.tokens = with_token, 0

    def init(self, m):
        pass

    def acquire(self, m):
        self.tokens += 1
        return {"outcome": "acquired", "fencing_token": self.tokens} if self.with_token else "acquired"

    def release(self, m):
        return "released"


kit.serve(TokenGiver("--no-token" not in sys.argv[1:]))
