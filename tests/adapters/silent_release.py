#!/usr/bin/python3
"""A broken adapter (tests/adapter_run_test.cpp): a real lock on the first server (SET NX
PX on init's key, which its init_ok names), one connection kept open, but its release
answers `released` without sending anything: the key stays until its TTL. Under
`unavailable:at=release:mode=refuse` its connection is idle while refused and no
request comes: the fault refused nothing, so it did not act and the run is `error`."""
import json
import sys
import uuid

import redis

server, key = None, ""
for line in sys.stdin:
    m = json.loads(line)
    kind = m["type"]
    if kind == "init":
        server = redis.Redis(host=m["servers"][0]["host"], port=m["servers"][0]["port"])
        server.ping()  # the connection is open (and pooled) from here on
        key = m["key"]
        reply = {"type": "init_ok", "library": "silent-release", "version": "0", "language": "python",
                 "capabilities": {"expires": True, "owner_checked_release": True}, "key": key}
    elif kind == "acquire":
        try:
            got = server.set(key, uuid.uuid4().hex, nx=True, px=m["ttl_ms"])
            reply = {"type": "acquire_ok", "outcome": "acquired" if got else "timed_out"}
        except redis.RedisError as error:  # the refusal may outlast the release: this SET's reset
            reply = {"type": "acquire_ok", "outcome": "unknown", "error": str(error)}
    elif kind == "release":
        reply = {"type": "release_ok", "outcome": "released"}  # the broken part: nothing sent
    else:
        reply = {"type": "noop_ok"}
    print(json.dumps({"id": m["id"], **reply}), flush=True)
