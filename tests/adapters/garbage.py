#!/usr/bin/python3
"""A broken adapter (tests/adapter_lock_test.cpp). argv[1] says how it breaks:
not-json (answers init with a line that is not JSON), shape (acquire's outcome
is no protocol word), wrong-id (acquire's reply carries another id)."""
import json
import sys

mode = sys.argv[1]
for line in sys.stdin:
    request = json.loads(line)
    if mode == "not-json":
        print("hello, I am not JSON", flush=True)
    elif request["type"] == "init":
        print(json.dumps({"id": request["id"], "type": "init_ok", "library": "garbage"}), flush=True)
    elif mode == "shape":
        print(json.dumps({"id": request["id"], "type": "acquire_ok", "outcome": "probably"}), flush=True)
    else:
        print(json.dumps({"id": request["id"] + 100, "type": "acquire_ok", "outcome": "acquired"}), flush=True)
