#!/usr/bin/python3
"""A broken adapter (tests/adapter_lock_test.cpp): answers init, then never answers again,
and ignores the end of its stdin too, so only SIGKILL ends it."""
import json
import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "init":
        print(json.dumps({"id": request["id"], "type": "init_ok", "library": "silent"}), flush=True)
while True:
    time.sleep(3600)
