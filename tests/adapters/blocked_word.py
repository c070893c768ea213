#!/usr/bin/python3
"""An adapter that claims blocked_ms (tests/adapter_lock_test.cpp). argv[1]: acquired-now
(blocked_ms on an acquire it says it got), unknown-now (unknown with blocked_ms before its
wait_ms passed), unknown-late (unknown with blocked_ms after wait_ms: the one the harness takes)."""
import json
import sys
import time

mode = sys.argv[1]
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "init":
        print(json.dumps({"id": request["id"], "type": "init_ok", "library": "blocked-word"}), flush=True)
        continue
    if mode == "unknown-late":
        time.sleep(request["wait_ms"] / 1000 + 0.05)
    outcome = "acquired" if mode == "acquired-now" else "unknown"
    print(json.dumps({"id": request["id"], "type": "acquire_ok", "outcome": outcome, "blocked_ms": 1000,
                      "error": "acquire blocked 1000 ms past its wait bound"}), flush=True)
