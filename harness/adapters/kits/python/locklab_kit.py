"""locklab's Python adapter kit (docs/adapters.md): the adapter protocol, so that an adapter is its library's calls.

An adapter describes itself and its library's calls as an object, and hands it to serve():

    class Adapter:
        library, version, capabilities = "redis-py", redis.__version__, {"expires": True, ...}
        def init(self, m): ...            # connect; may return extra init_ok fields ({"key": ...})
        def acquire(self, m): ...         # an outcome word, or {"outcome": word, "error": text, ...}
        def release(self, m): ...
        def extend(self, m): ...          # optional: without it, extend answers `error`
        def close(self): ...              # optional: at the end of stdin

An adapter whose library's wait is no bound has take(m) and give_back(hold) in place of acquire:

        def take(self, m): ...            # the library's hold, or None (timed_out); the kit bounds the wait
        def give_back(self, hold): ...    # releases a hold won after the kit answered `unknown`

serve() reads one JSON request a line, answers in order with the request's id, and answers
noop and init_ok itself. A handler that raises answers "when in doubt" (docs/adapters.md,
"When in doubt, unknown"): acquire `unknown`, release and extend `error`. release and extend
are answered within ANSWER_MS, else `error` (as the JavaScript kit does); acquire is bounded
here when the adapter has take(), else by the adapter. Every handler (init, acquire, release, extend,
close) runs on one thread of the kit's, in order, so a library that keeps its state per thread
(redis-py's Lock keeps its token in a threading.local) finds it; a call still running when its
bound passed holds up the requests after it until it returns. A line that is not
a JSON object is answered with an error line, and the adapter goes on. When stdin ends, the
adapter answers what it has read; then, within CLOSE_MS, the worker gives back a late win still on
its way (give_back) and runs close(); the adapter exits, holding or not.

Helpers: ttl_s(m), wait_s(m), retry_s(m) (the request's retry_ms, the run's --retry, else
RETRY_MS); Deadline, a bound a SIGSTOP does not spend. An adapter with take(m) has its acquire
bounded by the kit, by the harness's wait as every kit bounds it (_bounded_acquire: a win within
wait_ms + GRACE_MS is kept in the adapter's `held`, which release and extend use; a win after the
kit answered `unknown` goes to give_back); an adapter with acquire(m) bounds its own wait (redis-py's
blocking_timeout). An acquire that polls waits
between attempts with its Deadline's sleep(), never time.sleep() (see Deadline).
Only the standard library: an adapter brings its own lock library.
"""
import json
import queue
import sys
import threading
import time

RETRY_MS = 5  # the pause between attempts when the acquire request carries no retry_ms (older harnesses)
AWAKE_STEP_S = 0.05  # a Deadline's step: a step that took longer than two counts as two (the process was stopped)
GRACE_MS = 1000  # _bounded_acquire(): a win within wait_ms + this is kept; still silent then, it is stuck (as every kit)
ANSWER_MS = 1500  # release and extend answer within this, under AdapterLock's 2000 ms margin (as the JS kit)
CLOSE_MS = 500  # close() at the end of stdin, under AdapterLock's 1000 ms exit grace (then SIGKILL)
LATE = object()  # what _Worker.call() returns when the call did not finish within its bound

REPLY = {"acquire": "acquire_ok", "release": "release_ok", "extend": "extend_ok"}
IN_DOUBT = {"acquire": "unknown", "release": "error", "extend": "error"}


def ttl_s(m):
    """The request's lease in seconds."""
    return m["ttl_ms"] / 1000


def wait_s(m):
    """The acquire's wait in seconds (0: exactly one attempt)."""
    return m["wait_ms"] / 1000


def retry_s(m):
    """The acquire's pause between attempts in seconds: the request's retry_ms, else RETRY_MS."""
    retry = m.get("retry_ms")
    return (retry if isinstance(retry, int) and not isinstance(retry, bool) and retry > 0 else RETRY_MS) / 1000


class Deadline:
    """`ms` of the time this process could run, measured on the monotonic clock (not by counting
    sleeps, which load stretches). A holder-pause SIGSTOPs a client with its adapter while the
    clock goes on: a plain deadline would have passed at SIGCONT, before the reply the pause held
    back. So time is taken in steps, and a step that took longer than two counts as two, as
    AdapterLock counts its own bound (harness/support/awake_time.h).

    That cap undercounts any gap between two calls of left() (or passed()) longer than two
    steps, stopped or not: call them at least every AWAKE_STEP_S. So wait with sleep() or
    wait(), which do; a time.sleep(retry) between two passed() would count a 300 ms pause as
    100 ms, and a poll with --retry 1000 would wait ten times its bound."""

    def __init__(self, ms):
        self._left = max(ms, 0) / 1000
        self._last = time.monotonic()

    def left(self):
        """Seconds left (0 once passed)."""
        now = time.monotonic()
        self._left -= min(now - self._last, 2 * AWAKE_STEP_S)
        self._last = now
        return max(self._left, 0)

    def passed(self):
        return self.left() <= 0

    def sleep(self, s):
        """Sleeps `s` seconds, or until the deadline passes if that is sooner, in steps of at most
        AWAKE_STEP_S, counting each (the pause between an acquire's attempts)."""
        end = time.monotonic() + max(s, 0)
        while True:
            step = min(end - time.monotonic(), self.left(), AWAKE_STEP_S)
            if step <= 0:
                return
            time.sleep(step)

    def wait(self, event):
        """Waits until `event` (a threading.Event) is set or the deadline passes; True if it was set."""
        while not event.is_set():
            left = self.left()
            if left <= 0:
                return False
            event.wait(min(left, AWAKE_STEP_S))
        return True


class _Worker:
    """The one thread every handler runs on, in order (see the top)."""

    def __init__(self):
        self._jobs = queue.Queue()
        threading.Thread(target=self._run, daemon=True).start()  # daemon: a stuck call does not hold up the exit

    def _run(self):
        while True:
            call, done, box, on_late = self._jobs.get()
            try:
                value = call()
                with box["lock"]:
                    box["value"] = value
                    late = box.get("late", False)
                if late:  # on this thread, before the next request: the library's hold lives here
                    on_late(value)
            except BaseException as error:  # noqa: B902 - re-raised in the caller's thread
                box["error"] = error
            done.set()

    def start(self, call, on_late=lambda value: None):
        """Queues call(); returns (done, box): box gets its value or error, and a value that comes
        once the caller gave up on it (late()) goes to on_late, on the worker."""
        done, box = threading.Event(), {"lock": threading.Lock()}
        self._jobs.put((call, done, box, on_late))
        return done, box

    @staticmethod
    def late(box):
        """Gives up on the call: True unless it had already returned (its value is then the caller's)."""
        with box["lock"]:
            box["late"] = "value" not in box and "error" not in box
            return box["late"]

    @staticmethod
    def result(box):
        if "error" in box:
            raise box["error"]
        return box["value"]

    def call(self, call, ms=None):
        """call()'s value, run on the worker; LATE once `ms` (a Deadline) passed, if given."""
        done, box = self.start(call)
        if ms is None:
            done.wait()
        elif not Deadline(ms).wait(done) and self.late(box):
            return LATE
        done.wait()  # set right after the value or the error
        return self.result(box)


def _won(hold):
    """take(m) won: a hold, not None, nor the False a library's acquire() returns (a user's adapter that
    passes it on must not be answered `acquired`). Not plain truth: a hold object may define __len__."""
    return hold is not None and hold is not False


def _bounded_acquire(adapter, m, worker):
    """The acquire of an adapter with take(m), bounded by the harness's wait as every kit bounds it
    (docs/adapters.md, "A wait is a wait"): the wait ends at wait_ms, and an attempt on its way then gets
    GRACE_MS more. A hold that comes by then is the acquire's (the library said yes: a caller would enter,
    and the harness sees and judges the section; a win given back here would hide a second grant from
    the checker): it becomes adapter.held, and the answer is `acquired`; None is `timed_out`, and the hold
    the adapter had stays (False too). wait_ms 0 is one attempt, its hold kept whenever it comes within GRACE_MS.
    Still silent at wait_ms + GRACE_MS: `unknown` with blocked_ms, which the harness judges liveness,
    and a hold that comes later goes to give_back (the harness was told `unknown`: nobody holds it),
    on the worker before the next request. take and give_back run on the worker (redis-py's Lock keeps
    its token per thread); the bound is a Deadline: a SIGSTOP does not spend it."""
    began = time.monotonic()
    done, box = worker.start(lambda: adapter.take(m), lambda hold: _won(hold) and adapter.give_back(hold))
    if not Deadline(m["wait_ms"] + GRACE_MS).wait(done) and worker.late(box):
        ms = max(round((time.monotonic() - began) * 1000) - m["wait_ms"], GRACE_MS)
        return {"outcome": "unknown", "blocked_ms": ms,
                "error": "acquire blocked %d ms past its wait bound (the library still waiting)" % ms}
    done.wait()  # set right after the value or the error
    hold = worker.result(box)
    if not _won(hold):
        return "timed_out"
    adapter.held = hold
    return "acquired"


def _answer(adapter, m, worker):
    kind = m.get("type")
    if kind == "noop":
        return {"type": "noop_ok"}
    if kind == "init":
        extra = worker.call(lambda: adapter.init(m)) or {}
        return {"type": "init_ok", "library": adapter.library, "version": adapter.version, "language": "python",
                "capabilities": adapter.capabilities, **extra}
    if kind not in REPLY:
        return {"type": "error", "error": "unknown request type %r" % (kind,)}
    takes = kind == "acquire" and hasattr(adapter, "take")  # its wait bounded here, else by its acquire
    handler = getattr(adapter, kind, None)
    if handler is None and not takes:
        return {"type": REPLY[kind], "outcome": "error", "error": "%s has no %s" % (adapter.library, kind)}
    try:
        if takes:
            result = _bounded_acquire(adapter, m, worker)
        elif kind == "acquire":
            result = worker.call(lambda: handler(m))
        else:
            result = worker.call(lambda: handler(m), ANSWER_MS)
        if result is LATE:
            # as the JS kit: the library's call goes on past its bound, which the harness judges liveness
            result = {"outcome": "error", "blocked_ms": ANSWER_MS,
                      "error": "%s blocked past %d ms (the library still waiting)" % (kind, ANSWER_MS)}
    except Exception as error:  # the call may have reached Redis: when in doubt, unknown
        result = {"outcome": IN_DOUBT[kind], "error": repr(error)}
    return {"type": REPLY[kind], **({"outcome": result} if isinstance(result, str) else result)}


def _send(message):
    print(json.dumps(message), flush=True)


def serve(adapter):
    """Answers the requests on stdin until it ends, then runs adapter.close() if any, and exits."""
    worker = _Worker()
    for line in sys.stdin:
        try:
            m = json.loads(line)
        except ValueError:
            _send({"id": None, "type": "error", "error": "not JSON: " + line[:80].rstrip("\n")})
            continue
        if not isinstance(m, dict):
            _send({"id": None, "type": "error", "error": "not a request: " + line[:80].rstrip("\n")})
            continue
        try:
            reply = _answer(adapter, m, worker)
        except Exception as error:  # init or a malformed request: said on the line, and the adapter goes on
            reply = {"type": "error", "error": repr(error)}
        _send({"id": m.get("id"), **reply})
    # On the worker, after what is queued there: a late win's give_back (take) goes first, as in every kit.
    close = getattr(adapter, "close", None) or (lambda: None)
    try:
        worker.call(close, CLOSE_MS)
    except Exception:  # the harness has stopped listening: nothing to tell it
        pass
    sys.exit(0)
