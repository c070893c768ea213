"""The JSON-lines loop the test adapters with a real lock share (docs/adapters.md, "The
protocol"): init makes the lock with make_lock(server, key, ttl_ms), acquire and release call
it, noop answers, anything else is "not supported". Not a shipped kit: issue 26 brings those."""
import json
import sys


def serve(make_lock, library, capabilities, declared=None):
    """declared: more fields of init_ok, e.g. {"release_window": "resp:..."} (docs/adapters.md)."""
    lock = None
    for line in sys.stdin:
        request = json.loads(line)
        kind = request["type"]
        reply = {"id": request["id"]}
        if kind == "init":
            lock = make_lock(request["servers"][0], request["key"], request["ttl_ms"])
            reply.update(type="init_ok", library=library, version="0", language="python",
                         capabilities=capabilities, key=request["key"], **(declared or {}))
        elif kind == "noop":
            reply.update(type="noop_ok")
        elif kind == "acquire":
            outcome = lock.acquire(request["ttl_ms"], request["wait_ms"], request.get("retry_ms", 5))
            reply.update(type="acquire_ok", outcome=outcome)
        elif kind == "release":
            reply.update(type="release_ok", outcome=lock.release())
        else:
            reply.update(type=kind + "_ok", outcome="error", error="not supported")
        print(json.dumps(reply), flush=True)
