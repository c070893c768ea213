#!/usr/bin/python3
"""A broken adapter (tests/adapter_lock_test.cpp): answers init, then exits with status 4 on acquire."""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["type"] != "init":
        sys.exit(4)
    print(json.dumps({"id": request["id"], "type": "init_ok", "library": "exits-mid-run"}), flush=True)
