#!/usr/bin/python3
"""An adapter that reports its process's wall clock (tests/adapter_run_test.cpp): at init and
at every acquire it appends "CLIENT time.time()-in-ms" to the file named by its first argument,
so a test can see whether the clock-skew fault moved the clock of the adapter's own process
(the clock shim in LD_PRELOAD). It locks nothing: every acquire is `acquired`."""
import json
import sys
import time

out, client = sys.argv[1], None
for line in sys.stdin:
    request = json.loads(line)
    kind = request["type"]
    if kind in ("init", "acquire"):
        client = request.get("client", client)
        with open(out, "a") as f:
            f.write(f"{client} {int(time.time() * 1000)}\n")
    reply = {"init": {"type": "init_ok", "library": "clock-reporter", "version": "0", "language": "python",
                      "capabilities": {"expires": True, "owner_checked_release": True}},
             "noop": {"type": "noop_ok"},
             "acquire": {"type": "acquire_ok", "outcome": "acquired"},
             "release": {"type": "release_ok", "outcome": "released"}}[kind]
    print(json.dumps({"id": request["id"], **reply}), flush=True)
