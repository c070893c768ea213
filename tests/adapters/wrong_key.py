#!/usr/bin/python3
"""A broken adapter (tests/adapter_run_test.cpp): it locks init's key on the first server
(SET NX PX, compare-and-delete on release), but its init_ok names another key,
"other:KEY", that it never sets. The probe's check must catch it: `error`, one line
naming the adapter and the key (a fault that reads the key would read the wrong one)."""
import json
import sys
import uuid

import redis

RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
server, key, token = None, "", ""
for line in sys.stdin:
    m = json.loads(line)
    kind = m["type"]
    if kind == "init":
        server = redis.Redis(host=m["servers"][0]["host"], port=m["servers"][0]["port"])
        key = m["key"]
        reply = {"type": "init_ok", "library": "wrong-key", "version": "0", "language": "python",
                 "capabilities": {"expires": True, "owner_checked_release": True}, "key": "other:" + key}
    elif kind == "acquire":
        token = uuid.uuid4().hex
        got = server.set(key, token, nx=True, px=m["ttl_ms"])
        reply = {"type": "acquire_ok", "outcome": "acquired" if got else "timed_out"}
    elif kind == "release":
        gone = server.eval(RELEASE, 1, key, token)
        reply = {"type": "release_ok", "outcome": "released" if gone else "not_owner"}
    else:
        reply = {"type": "noop_ok"}
    print(json.dumps({"id": m["id"], **reply}), flush=True)
