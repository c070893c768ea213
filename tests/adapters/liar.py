#!/usr/bin/python3
"""A lying adapter (tests/adapter_run_test.cpp): it answers every acquire with `acquired`
and every release with `released` without asking Redis (it sends no command at all, which
is the point), so it enters while another client holds the key. The oracle must catch it:
a violation, not an error."""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    kind = request["type"]
    reply = {"init": {"type": "init_ok", "library": "liar", "version": "0", "language": "python",
                      "capabilities": {"expires": True, "owner_checked_release": True}},
             "noop": {"type": "noop_ok"},
             "acquire": {"type": "acquire_ok", "outcome": "acquired"},
             "release": {"type": "release_ok", "outcome": "released"}}[kind]
    print(json.dumps({"id": request["id"], **reply}), flush=True)
