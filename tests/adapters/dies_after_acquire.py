#!/usr/bin/python3
"""An adapter that dies while its client holds the lock (tests/adapter_lock_test.cpp): answers
init, answers acquire `acquired` without asking Redis, then exits 50 ms later. argv[1]: how it
exits: error (an uncaught error: a traceback on stderr, status 1; a crash of its client) or
clean (status 0, nothing said; a broken adapter)."""
import json
import os
import sys
import threading
import time

mode = sys.argv[1]


def die():
    time.sleep(0.05)
    if mode == "error":
        sys.stderr.write("Traceback (most recent call last):\nRuntimeError: the connection pool died\n")
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)


for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "init":
        print(json.dumps({"id": request["id"], "type": "init_ok", "library": "dies-after-acquire"}), flush=True)
        continue
    print(json.dumps({"id": request["id"], "type": "acquire_ok", "outcome": "acquired"}), flush=True)
    threading.Thread(target=die).start()
