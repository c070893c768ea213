#!/usr/bin/python3
"""A slow adapter (tests/adapter_lock_test.cpp): it answers acquire at once, but a release
only once the file CUE.go exists; it makes CUE.got when the release arrives. So a test can
stop the client (and this adapter) while the release is out, continue it, and give the
answer only after that: the client's bound must not have counted the stop."""
import json
import os
import sys
import time

cue = sys.argv[1]
for line in sys.stdin:
    request = json.loads(line)
    kind = request["type"]
    if kind == "release":
        open(cue + ".got", "w").close()
        while not os.path.exists(cue + ".go"):
            time.sleep(0.005)
    reply = {"init": {"type": "init_ok", "library": "answers-on-cue"},
             "acquire": {"type": "acquire_ok", "outcome": "acquired"},
             "release": {"type": "release_ok", "outcome": "released"},
             "noop": {"type": "noop_ok"}}[kind]
    print(json.dumps({"id": request["id"], **reply}), flush=True)
