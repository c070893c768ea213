#!/usr/bin/env python3
"""The adapter kits (harness/adapters/kits/, docs/adapters.md, "The kits") on their own, no Redis:
each kit answers in order with the request's id, says what a line that is not a request is and goes
on, answers "when in doubt", answers extend for a library without one, exposes the acquire's
retry_ms (5 ms without it, or for 0), and exits at the end of stdin after close(). The Python kit's
Deadline is not spent by a SIGSTOP, and a poll that pauses with its sleep() waits its bound, however
long the pause; the Python kit bounds release and extend (ANSWER_MS) as the JavaScript kit does. The Go,
Java and Python kits answer a call past its bound with blocked_ms (acquire unknown, release error), as the
JavaScript kit does; the Go, Rust, Python and JavaScript kits give a late win back even when stdin has already
ended. The grace
(docs/adapters.md, the protocol's "acquire") is one rule in every kit: a win in the 1 s after wait_ms is
answered acquired and kept as the adapter's hold (the Python kit's take(), the JavaScript kit's withinWait,
the Go, Rust and Java kits); only a win after the kit answered `unknown` is given back. The JavaScript kit names the version of a library it has not installed `unknown` (the toy's library is
not installed). The Python kit runs every handler on one thread. The JavaScript kit's part is skipped without node.
The Go kit (harness/adapters/kits/go) runs a toy built here, against the kit's folder: it keeps the hold, so a
release without one is `already_expired` without asking the library; its wait context is not spent by a
SIGSTOP; its part is skipped without go.
The Java kit (kits/java) passes the same protocol checks with a toy adapter compiled against its built jar, and a
SIGSTOP of the JVM does not spend its acquire bound; its part is skipped without javac or without the kit's build
(harness/adapters/kits/java/install).
The Rust kit (kits/rust) runs its own toy (kits/rust/examples/toy.rs), built here by cargo, offline, into the kit's
target/: the Go kit's checks (the hold kept, blocked_ms, a late win given back after stdin ended, awake_sleep not
spent by a SIGSTOP); its part is skipped without cargo or without the crates already fetched
(harness/adapters/kits/rust/install)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KITS = os.path.join(ROOT, "harness", "adapters", "kits")

PY_ADAPTER = r'''
import sys
sys.path.insert(0, sys.argv[1])
import threading
import time
import locklab_kit as kit

class Toy:
    library, version, capabilities = "toy", "0", {"expires": True}
    def init(self, m):
        self.thread = threading.get_ident()
        return {"key": m["key"]}
    def acquire(self, m):
        if m.get("boom"):
            raise RuntimeError("lost reply")
        return {"outcome": "timed_out", "error": "retry %.3f" % kit.retry_s(m)}
    def release(self, m):
        if m.get("slow"):
            time.sleep(5)  # a library that does not answer: the kit answers `error` at ANSWER_MS
        raise RuntimeError("no answer; on init's thread: %s" % (threading.get_ident() == self.thread))
    def close(self):
        open(sys.argv[2], "w").write("closed")

kit.serve(Toy())
'''

PY_TAKE_ADAPTER = r'''
import sys
sys.path.insert(0, sys.argv[1])
import threading
import time
import locklab_kit as kit

class Takes:  # a library whose wait is no bound: the kit bounds take()
    library, version, capabilities = "toy", "0", {"expires": True}
    held = None
    def init(self, m):
        self.thread = threading.get_ident()
    def take(self, m):  # a library call that answers after sleep_ms, whatever the wait: a hold, or False
        time.sleep(m["sleep_ms"] / 1000)  # (as a library's acquire() says no: not a hold, never `acquired`)
        return False if m.get("lose") else "hold %d" % m["sleep_ms"]
    def give_back(self, hold):
        with open(sys.argv[2], "a") as f:
            f.write("%s:%s\n" % (hold, threading.get_ident() == self.thread))
    def release(self, m):
        return {"outcome": "released", "error": str(self.held)}

kit.serve(Takes())
'''

JS_TAKE_ADAPTER = r'''
const fs = require('fs');
const kit = require(process.argv[1]);
let held = null;
kit.serve({
  library: 'toy-not-installed', capabilities: {expires: true},
  async init() {},
  async acquire(m) {  // a library call that answers after sleep_ms, whatever the wait: a hold, or false
    const call = new Promise((resolve) => setTimeout(() => resolve(!m.lose && `hold ${m.sleep_ms}`), m.sleep_ms));
    const got = await kit.withinWait(m, call, (late) => late && fs.appendFileSync(process.argv[2], `${late}\n`));
    if (got.blocked) return got.blocked;
    if (!got.value) return 'timed_out';
    held = got.value;
    return 'acquired';
  },
  async release() { return {outcome: 'released', error: String(held)}; },
});
'''

JS_ADAPTER = r'''
const kit = require(process.argv[1]);
kit.serve({
  library: 'toy-not-installed', capabilities: {expires: true},
  async init() {},
  async acquire(m) {
    if (m.boom) throw new Error('lost reply');
    return {outcome: 'timed_out', error: `retry ${kit.retryMs(m)}`};
  },
  async release() { throw new Error('no answer'); },
  async close() { require('fs').writeFileSync(process.argv[2], 'closed'); },
});
'''

GO_ADAPTER = r'''
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	kit "locklab/kits/go"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "wait" { // kit.WaitContext(ms): print how long it took
		ms, _ := strconv.Atoi(os.Args[2])
		start := time.Now()
		fmt.Println("ready")
		ctx, cancel := kit.WaitContext(time.Duration(ms) * time.Millisecond)
		defer cancel()
		<-ctx.Done()
		fmt.Println(time.Since(start).Milliseconds())
		return
	}
	kit.Serve(kit.Adapter[int]{
		Library: "toy", Module: "example.com/toy-not-linked", Capabilities: map[string]bool{"expires": true},
		Init: func(m kit.Request) (string, error) { return m.Key, nil },
		Acquire: func(_ context.Context, m kit.Request) (int, kit.Reply) {
			if m.TTLMs == 13 {
				panic("lost reply")
			}
			if m.TTLMs == 17 { // a library that ignores its wait: unknown at wait_ms + Grace, with blocked_ms
				time.Sleep(3 * time.Second)
			}
			if m.TTLMs == 23 { // a win after wait_ms + Grace: answered unknown, then given back
				time.Sleep(1200 * time.Millisecond)
				return 23, kit.Say("acquired")
			}
			if m.TTLMs == 29 { // a win 600 ms in, whatever the wait: in the grace after wait_ms 300
				time.Sleep(600 * time.Millisecond)
				return 29, kit.Say("acquired")
			}
			if m.TTLMs == 19 { // a hold whose release does not answer
				return 19, kit.Say("acquired")
			}
			return 0, kit.Reply{Outcome: "timed_out", Error: fmt.Sprintf("retry %d", m.Retry().Milliseconds())}
		},
		Release: func(_ context.Context, hold int) kit.Reply {
			if hold == 29 {
				os.WriteFile(os.Args[1]+".given29", []byte("given back"), 0o644)
				return kit.Say("released")
			}
			if hold == 23 {
				os.WriteFile(os.Args[1]+".given", []byte("given back"), 0o644)
				return kit.Say("released")
			}
			if hold == 19 {
				time.Sleep(3 * time.Second) // the kit answers `error` with blocked_ms at AnswerWithin
			}
			panic("never asked: there is no hold")
		},
		Close:   func() { os.WriteFile(os.Args[1], []byte("closed"), 0o644) },
	})
}
'''
JAVA_ADAPTER = r'''
import com.google.gson.JsonObject;
import java.io.FileWriter;
import java.util.Map;
import locklab.kit.Adapter;
import locklab.kit.Kit;
import locklab.kit.Outcome;

public class Toy implements Adapter {
  static String closed;
  public static void main(String[] args) { closed = args[0]; Kit.serve(new Toy()); }
  public String library() { return "toy"; }
  public String version() { return "0"; }
  public Map<String, Boolean> capabilities() { return Map.of("expires", true); }
  public Map<String, Object> init(JsonObject m) { return null; }
  public Object acquire(JsonObject m) throws Exception {
    if (m.has("boom")) throw new RuntimeException("lost reply");
    if (m.has("slow")) Thread.sleep(5000);  // a library that does not answer: unknown at wait_ms + GRACE_MS
    if (m.has("late")) {  // a win 600 ms in, whatever the wait
      Thread.sleep(600);
      return "acquired";
    }
    return Outcome.of("timed_out", "retry " + Kit.retryMs(m));
  }
  public void lateAcquire(Object result) {
    try (FileWriter out = new FileWriter(closed + ".given", true)) { out.write(result + "\n"); } catch (Exception e) { }
  }
  public Object release(JsonObject m) throws Exception {
    if (m.has("slow")) Thread.sleep(5000);  // error with blocked_ms at ANSWER_MS
    throw new RuntimeException("no answer");
  }
  public void close() {
    try (FileWriter out = new FileWriter(closed)) { out.write("closed"); } catch (Exception e) { }
  }
}
'''
JAVA_TARGET = os.path.join(KITS, "java", "target")
JAVA_JARS = [os.path.join(JAVA_TARGET, "java-kit", "java-kit.jar"),
             os.path.join(JAVA_TARGET, "redisson-3.18.1", "lib", "gson-2.10.1.jar")]

REQUESTS = [
    {"id": 1, "type": "init", "servers": [{"host": "127.0.0.1", "port": 1}], "key": "k", "client": 1, "ttl_ms": 500},
    "hello",
    "null",
    {"id": 2, "type": "acquire", "ttl_ms": 500, "wait_ms": 0, "retry_ms": 7},
    {"id": 3, "type": "acquire", "ttl_ms": 500, "wait_ms": 0},
    {"id": 4, "type": "acquire", "ttl_ms": 500, "wait_ms": 0, "retry_ms": 0},
    {"id": 5, "type": "acquire", "ttl_ms": 13, "wait_ms": 0, "boom": True},  # the Go toy panics at ttl_ms 13
    {"id": 6, "type": "release"},
    {"id": 7, "type": "extend", "ttl_ms": 500},
    {"id": 8, "type": "noop"},
    {"id": 9, "type": "frobnicate"},
]


def blocked(test, argv, requests):
    """The replies to init, then `requests` (each past its bound), and a noop: each blocked one carries blocked_ms
    (docs/adapters.md: the harness judges such a call liveness), as the JavaScript kit's protocol.js says it."""
    lines = [{"id": 1, "type": "init", "key": "k", "servers": [{"host": "127.0.0.1", "port": 1}], "client": 1,
              "ttl_ms": 500}] + requests + [{"id": 99, "type": "noop"}]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          input="".join(json.dumps(r) + "\n" for r in lines))
    replies = {r.get("id"): r for r in map(json.loads, done.stdout.splitlines()) if '"event"' not in json.dumps(r)}
    test.assertEqual(replies.get(99), {"id": 99, "type": "noop_ok"}, done.stdout + done.stderr)
    return replies


def converse(argv):
    lines = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in REQUESTS)
    done = subprocess.run(argv, input=lines, capture_output=True, text=True, timeout=30)
    return done, [json.loads(line) for line in done.stdout.splitlines() if '"event"' not in line]


class KitTest:
    """The checks the four kits share; each subclass runs its kit's toy adapter."""

    retry_words = None  # how the toy prints 7, 5 and 5
    version = None  # the toy's init_ok version
    release_without_hold = "error"  # the toy's release raises; the Go kit answers without asking it

    def argv(self, closed):
        raise NotImplementedError

    def test_the_protocol(self):
        closed = os.path.join(self.tmp, "closed")
        done, replies = converse(self.argv(closed))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual([r.get("id") for r in replies], [1, None, None, 2, 3, 4, 5, 6, 7, 8, 9], replies)
        by_id = {r["id"]: r for r in replies if r.get("id") is not None}
        self.assertEqual(by_id[1]["type"], "init_ok")
        self.assertEqual(by_id[1]["capabilities"], {"expires": True})
        self.assertEqual(by_id[1]["version"], self.version)
        self.assertTrue(replies[1]["error"].startswith("not JSON: hello"), replies[1])
        self.assertTrue(replies[2]["error"].startswith("not a request: null"), replies[2])
        self.assertEqual([by_id[i]["error"] for i in (2, 3, 4)], ["retry " + w for w in self.retry_words])
        self.assertEqual((by_id[5]["type"], by_id[5]["outcome"]), ("acquire_ok", "unknown"))  # when in doubt
        self.assertEqual((by_id[6]["type"], by_id[6]["outcome"]), ("release_ok", self.release_without_hold))
        self.assertEqual((by_id[7]["outcome"], by_id[7]["error"]), ("error", by_id[1]["library"] + " has no extend"))
        self.assertEqual(by_id[8], {"id": 8, "type": "noop_ok"})
        self.assertEqual(by_id[9]["type"], "error")
        with open(closed) as f:
            self.assertEqual(f.read(), "closed", "close() runs at the end of stdin")

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="locklab-kit-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


class GraceTest:
    """The grace, one rule in every kit (docs/adapters.md, "A wait is a wait"), on the kits whose toys bound a
    library call that answers after `sleep_ms` (the Python kit's take(), the JavaScript kit's withinWait)."""

    no_hold = None  # how the toy's release names no hold
    given_line = None  # the give-back's line in the toy's file for "hold 1600"

    def take_argv(self, given):
        raise NotImplementedError

    def test_a_win_in_the_grace_is_kept(self):
        # A win 300 ms past wait_ms 300 is acquired and becomes the hold (the library said yes: a caller would
        # enter, and the harness sees its section); wait_ms 0 is one attempt, its win kept within the grace;
        # a failed attempt keeps the hold it had. Nothing is given back.
        given = os.path.join(self.tmp, "given")
        requests = [{"id": 1, "type": "init", "key": "k"},
                    {"id": 2, "type": "acquire", "ttl_ms": 500, "wait_ms": 300, "sleep_ms": 10},
                    {"id": 3, "type": "acquire", "ttl_ms": 500, "wait_ms": 300, "sleep_ms": 600},
                    {"id": 4, "type": "release"},
                    {"id": 5, "type": "acquire", "ttl_ms": 500, "wait_ms": 0, "sleep_ms": 200},
                    {"id": 6, "type": "acquire", "ttl_ms": 500, "wait_ms": 300, "sleep_ms": 600, "lose": True},
                    {"id": 7, "type": "release"}]
        done = subprocess.run(self.take_argv(given), capture_output=True, text=True, timeout=30,
                              input="".join(json.dumps(r) + "\n" for r in requests))
        self.assertEqual(done.returncode, 0, done.stderr)
        replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines()) if r.get("type") != "event"}
        self.assertEqual([replies[i]["outcome"] for i in range(2, 8)],
                         ["acquired", "acquired", "released", "acquired", "timed_out", "released"], replies)
        self.assertEqual([replies[4]["error"], replies[7]["error"]], ["hold 600", "hold 200"], replies)
        self.assertFalse(os.path.exists(given), "a win in the grace was given back")

    def test_a_win_after_the_grace_is_given_back(self):
        # A call still silent at wait_ms 100 + 1 s is `unknown` with blocked_ms; its win at 1.6 s is given back
        # (the harness was told unknown: nobody holds it) and never becomes the hold. stdin stays open until the
        # give-back is seen (polled), so that this test does not depend on the end of stdin's wait (tested below).
        given = os.path.join(self.tmp, "given")
        child = subprocess.Popen(self.take_argv(given), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            def ask(request):
                child.stdin.write(json.dumps(request) + "\n")
                child.stdin.flush()
                while True:
                    reply = json.loads(child.stdout.readline())
                    if reply.get("type") != "event":
                        return reply
            ask({"id": 1, "type": "init", "key": "k"})
            blocked_reply = ask({"id": 2, "type": "acquire", "ttl_ms": 500, "wait_ms": 100, "sleep_ms": 1600})
            self.assertEqual(blocked_reply["outcome"], "unknown", blocked_reply)
            self.assertGreaterEqual(blocked_reply["blocked_ms"], 1000, blocked_reply)
            self.assertRegex(blocked_reply["error"],
                             r"^acquire blocked \d+ ms past its wait bound \(the library still waiting\)$")
            end = time.monotonic() + 20
            while not os.path.exists(given) and time.monotonic() < end:
                time.sleep(0.05)
            released = ask({"id": 3, "type": "release"})
        finally:
            child.stdin.close()
            child.wait(timeout=10)
            child.stdout.close()
        with open(given) as f:
            self.assertEqual(f.read().split("\n")[0], self.given_line)
        self.assertEqual((released["outcome"], released["error"]), ("released", self.no_hold), released)
        self.assertEqual(child.returncode, 0)

    def test_the_end_of_stdin_waits_for_a_late_give_back(self):
        # As the Go kit: the win comes 200 ms after `unknown`, when stdin has already ended; the kit gives it
        # back before it exits (within CLOSE_MS), not exiting over the give-back.
        given = os.path.join(self.tmp, "given")
        requests = [{"id": 1, "type": "init", "key": "k"},
                    {"id": 2, "type": "acquire", "ttl_ms": 500, "wait_ms": 0, "sleep_ms": 1200}]
        done = subprocess.run(self.take_argv(given), capture_output=True, text=True, timeout=30,
                              input="".join(json.dumps(r) + "\n" for r in requests))
        self.assertEqual(done.returncode, 0, done.stderr)
        replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines()) if r.get("type") != "event"}
        self.assertEqual(replies[2]["outcome"], "unknown", replies)
        with open(given) as f:
            self.assertEqual(f.read().split("\n")[0], self.given_line.replace("1600", "1200"))


class PythonKit(GraceTest, KitTest, unittest.TestCase):
    retry_words = ["0.007", "0.005", "0.005"]
    version = "0"
    no_hold = "None"
    given_line = "hold 1600:True"  # given back on the kit's one thread

    def argv(self, closed):
        return [sys.executable, "-c", PY_ADAPTER, os.path.join(KITS, "python"), closed]

    def take_argv(self, given):
        return [sys.executable, "-c", PY_TAKE_ADAPTER, os.path.join(KITS, "python"), given]

    def test_a_stop_does_not_spend_a_deadline(self):
        # Deadline(400 ms), stopped at 100 ms for 1 s: the stop counts as two 50 ms steps, so
        # about 200 ms are left at SIGCONT, and the wait ends near 1.3 s, not at 1.1 s.
        code = ("import sys, threading, time; sys.path.insert(0, sys.argv[1]); import locklab_kit as kit; "
                "start = time.monotonic(); print('ready', flush=True); kit.Deadline(400).wait(threading.Event()); "
                "print(round((time.monotonic() - start) * 1000))")
        child = subprocess.Popen([sys.executable, "-c", code, os.path.join(KITS, "python")], stdout=subprocess.PIPE,
                                 text=True)
        self.assertEqual(child.stdout.readline(), "ready\n")  # a stop during python's start-up would test nothing
        time.sleep(0.1)
        os.kill(child.pid, signal.SIGSTOP)
        time.sleep(1.0)
        os.kill(child.pid, signal.SIGCONT)
        waited = int(child.communicate(timeout=10)[0])
        self.assertGreaterEqual(waited, 1200, "the stop spent the deadline")

    def test_every_handler_runs_on_one_thread(self):
        # redis-py's Lock keeps its token in a threading.local: release must run where acquire did.
        replies = converse(self.argv(os.path.join(self.tmp, "closed")))[1]
        self.assertIn("on init's thread: True", [r for r in replies if r.get("id") == 6][0]["error"])

    def poll(self, body):
        """The ms the kit's Python code `body` took, run in a child (sys.argv[1]: the kit's folder)."""
        code = ("import sys, time; sys.path.insert(0, sys.argv[1]); import locklab_kit as kit\n"
                "start = time.monotonic()\n%s\nprint(round((time.monotonic() - start) * 1000))" % body)
        done = subprocess.run([sys.executable, "-c", code, os.path.join(KITS, "python")], capture_output=True,
                              text=True, timeout=20)
        self.assertEqual(done.returncode, 0, done.stderr)
        return int(done.stdout)

    def test_a_poll_with_a_long_retry_waits_its_bound(self):
        # tests/adapters/mine.py's loop with --wait 1000 --retry 300: a time.sleep(0.3) between two passed()
        # counted 100 ms a pause (the step's cap), and the wait took about 3 s; Deadline.sleep counts it all.
        waited = self.poll("d = kit.Deadline(1000)\nwhile not d.passed(): d.sleep(0.3)")
        self.assertGreaterEqual(waited, 950, "the wait ended before its bound")
        self.assertLess(waited, 1500, "the wait overran its bound")
        # A sleep longer than the deadline ends with it; a sleep within it takes its time.
        self.assertLess(self.poll("kit.Deadline(200).sleep(5)"), 700)
        self.assertGreaterEqual(self.poll("kit.Deadline(1000).sleep(0.3)"), 290)

    def test_a_release_that_does_not_answer_is_an_error_within_the_bound(self):
        requests = [{"id": 1, "type": "init", "key": "k"}, {"id": 2, "type": "release", "slow": True},
                    {"id": 3, "type": "noop"}]
        start = time.monotonic()
        done = subprocess.run(self.argv(os.path.join(self.tmp, "closed")), capture_output=True, text=True,
                              timeout=30, input="".join(json.dumps(r) + "\n" for r in requests))
        replies = [json.loads(line) for line in done.stdout.splitlines()]
        self.assertLess(time.monotonic() - start, 4.5, "the slow release held the adapter up")
        self.assertEqual(replies[1], {"id": 2, "type": "release_ok", "outcome": "error", "blocked_ms": 1500,
                                      "error": "release blocked past 1500 ms (the library still waiting)"}, replies)
        self.assertEqual(replies[2], {"id": 3, "type": "noop_ok"})


@unittest.skipUnless(shutil.which("node"), "node is missing")
class JavaScriptKit(GraceTest, KitTest, unittest.TestCase):
    retry_words = ["7", "5", "5"]
    version = "unknown"  # the toy's library is not in the kit's node_modules, and the toy names no version
    no_hold = "null"
    given_line = "hold 1600"

    def take_argv(self, given):
        return ["node", "-e", JS_TAKE_ADAPTER, os.path.join(KITS, "js", "protocol.js"), given]

    def argv(self, closed):
        return ["node", "-e", JS_ADAPTER, os.path.join(KITS, "js", "protocol.js"), closed]


@unittest.skipUnless(shutil.which("go"), "go is missing")
class GoKit(KitTest, unittest.TestCase):
    retry_words = ["7", "5", "5"]
    version = "unknown"  # the toy's Module is not linked into it
    release_without_hold = "already_expired"
    binary = None

    @classmethod
    def setUpClass(cls):
        # The toy as a module of its own, the kit by a replace of its folder: no network, no go.sum.
        cls.build = tempfile.mkdtemp(prefix="locklab-gokit-")
        kit = os.path.join(KITS, "go")
        with open(os.path.join(cls.build, "go.mod"), "w") as f:
            f.write("module toy\n\ngo 1.22\n\nrequire locklab/kits/go v0.0.0\n\nreplace locklab/kits/go => %s\n" % kit)
        with open(os.path.join(cls.build, "main.go"), "w") as f:
            f.write(GO_ADAPTER)
        cache = os.path.join(kit, ".go", "cache") if os.path.isdir(os.path.join(kit, ".go")) else os.path.join(cls.build, "cache")
        env = dict(os.environ, GOCACHE=cache, GOTOOLCHAIN="local", GOFLAGS="-mod=mod", CGO_ENABLED="0",
                   GOPATH=os.path.join(cls.build, "gopath"))
        cls.binary = os.path.join(cls.build, "toy")
        done = subprocess.run(["go", "build", "-o", cls.binary, "."], cwd=cls.build, env=env, capture_output=True,
                              text=True, timeout=300)
        # go is here (else the class is skipped): a build that fails is the kit's compile error, a failure.
        if done.returncode != 0:
            raise AssertionError("the Go toy does not build: " + done.stderr.strip())

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.build, ignore_errors=True)

    def argv(self, closed):
        return [self.binary, closed]

    def test_a_call_past_its_bound_says_blocked_ms(self):
        replies = blocked(self, self.argv(os.path.join(self.tmp, "closed")), [
            {"id": 2, "type": "acquire", "ttl_ms": 17, "wait_ms": 0},
            {"id": 3, "type": "acquire", "ttl_ms": 19, "wait_ms": 0},
            {"id": 4, "type": "release"}])
        self.assertEqual(replies[2]["outcome"], "unknown", replies)
        self.assertGreaterEqual(replies[2]["blocked_ms"], 1000, replies)  # wait_ms 0 + Grace 1 s
        self.assertRegex(replies[2]["error"], r"^acquire blocked \d+ ms past its wait bound \(the library still waiting\)$")
        self.assertEqual(replies[3]["outcome"], "acquired", replies)
        self.assertEqual((replies[4]["outcome"], replies[4]["blocked_ms"]), ("error", 1500), replies)

    def test_the_end_of_stdin_waits_for_a_late_give_back(self):
        # The late win comes 200 ms after `unknown`, when stdin has already ended: the kit gives it back
        # before it exits (within CloseWithin), not os.Exit over the give-back.
        closed = os.path.join(self.tmp, "closed")
        blocked(self, self.argv(closed), [{"id": 2, "type": "acquire", "ttl_ms": 23, "wait_ms": 0}])
        with open(closed + ".given") as f:
            self.assertEqual(f.read(), "given back")

    def test_a_win_in_the_grace_is_kept(self):
        # The grace (docs/adapters.md, "A wait is a wait"): in the Go, Rust and Java kits a win 300 ms past
        # wait_ms 300 is answered acquired (the library said yes: a caller would enter, and the harness sees
        # its section); nothing is given back.
        closed = os.path.join(self.tmp, "closed")
        replies = blocked(self, self.argv(closed), [{"id": 2, "type": "acquire", "ttl_ms": 29, "wait_ms": 300}])
        self.assertEqual(replies[2]["outcome"], "acquired", replies)
        self.assertFalse(os.path.exists(closed + ".given29"), "a win in the grace was given back")

    def test_a_stop_does_not_spend_the_wait_context(self):
        # WaitContext(400 ms), stopped at 100 ms for 1 s: the stop counts as two 50 ms steps, so
        # about 200 ms are left at SIGCONT, and the wait ends near 1.3 s, not at 1.1 s.
        child = subprocess.Popen([self.binary, "wait", "400"], stdout=subprocess.PIPE, text=True)
        self.assertEqual(child.stdout.readline(), "ready\n")
        time.sleep(0.1)
        os.kill(child.pid, signal.SIGSTOP)
        time.sleep(1.0)
        os.kill(child.pid, signal.SIGCONT)
        waited = int(child.communicate(timeout=10)[0])
        self.assertGreaterEqual(waited, 1200, "the stop spent the wait")


def cargo():
    """cargo's path (rustup puts it in ~/.cargo/bin, which PATH may lack), or None."""
    return shutil.which("cargo") or shutil.which("cargo", path=os.path.expanduser("~/.cargo/bin"))


@unittest.skipUnless(cargo(), "cargo is missing")
class RustKit(GoKit):
    """The Rust kit's toy passes the Go kit's checks: it keeps the hold (release without one: already_expired)."""
    version = "0"

    @classmethod
    def setUpClass(cls):
        workspace = os.path.join(ROOT, "harness", "adapters", "rust")
        target = os.path.join(KITS, "rust", "target")
        # The install's own build (kits/rust/install): nothing to do when it ran, and the same feature
        # resolution as the adapters' (a build of the kit alone would compile tokio again, minutes).
        done = subprocess.run([cargo(), "build", "--release", "--locked", "--offline", "--bins", "--examples"],
                              cwd=workspace, env=dict(os.environ, CARGO_TARGET_DIR=target),
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0 and "offline" in done.stderr:
            raise unittest.SkipTest("the kit's crates are not fetched (harness/adapters/kits/rust/install): "
                                    + done.stderr.strip().splitlines()[-1])
        # cargo is here and the crates are: a build that fails is the kit's compile error, a failure.
        if done.returncode != 0:
            raise AssertionError("the Rust toy does not build: " + done.stderr.strip())
        cls.build = tempfile.mkdtemp(prefix="locklab-rustkit-")
        cls.binary = os.path.join(target, "release", "examples", "toy")


@unittest.skipUnless(shutil.which("javac") and all(os.path.exists(j) for j in JAVA_JARS),
                     "javac or the Java kit's build is missing (harness/adapters/kits/java/install)")
class JavaKit(KitTest, unittest.TestCase):
    retry_words = ["7", "5", "5"]
    version = "0"

    def setUp(self):
        super().setUp()
        with open(os.path.join(self.tmp, "Toy.java"), "w") as f:
            f.write(JAVA_ADAPTER)
        self.classpath = os.pathsep.join([self.tmp] + JAVA_JARS)
        subprocess.run(["javac", "-cp", self.classpath, "-d", self.tmp, os.path.join(self.tmp, "Toy.java")],
                       check=True, timeout=60)

    def argv(self, closed):
        return ["java", "-XX:TieredStopAtLevel=1", "-cp", self.classpath, "Toy", closed]

    def test_a_call_past_its_bound_says_blocked_ms(self):
        replies = blocked(self, self.argv(os.path.join(self.tmp, "closed")), [
            {"id": 2, "type": "acquire", "ttl_ms": 500, "wait_ms": 200, "slow": True},
            {"id": 3, "type": "release", "slow": True}])
        self.assertEqual(replies[2]["outcome"], "unknown", replies)
        self.assertGreaterEqual(replies[2]["blocked_ms"], 1000, replies)  # past wait_ms 200 + GRACE_MS 1 s
        self.assertRegex(replies[2]["error"], r"^acquire blocked \d+ ms past its wait bound \(the library still waiting\)$")
        self.assertEqual((replies[3]["outcome"], replies[3]["blocked_ms"]), ("error", 1500), replies)

    def test_a_win_in_the_grace_is_kept(self):
        # As the Go kit: a win 300 ms past wait_ms 300 is answered acquired, not given back (lateAcquire is
        # for a win after the kit answered unknown).
        closed = os.path.join(self.tmp, "closed")
        replies = blocked(self, self.argv(closed), [
            {"id": 2, "type": "acquire", "ttl_ms": 500, "wait_ms": 300, "late": True},
            {"id": 3, "type": "acquire", "ttl_ms": 500, "wait_ms": 0, "late": True}])
        self.assertEqual([replies[2]["outcome"], replies[3]["outcome"]], ["acquired", "acquired"], replies)
        self.assertFalse(os.path.exists(closed + ".given"), "a win in the grace was given back")

    def test_a_stop_does_not_spend_the_acquire_bound(self):
        # acquire with wait_ms 0 is bounded at GRACE_MS (1 s) of awake time; the JVM stopped at
        # 300 ms for 1.5 s counts as two 50 ms steps, so `unknown` comes near 2.4 s, not at 1.3 s.
        child = subprocess.Popen(self.argv(os.path.join(self.tmp, "closed")), stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        child.stdin.write(json.dumps(REQUESTS[0]) + "\n")
        child.stdin.flush()
        self.assertEqual(json.loads(child.stdout.readline())["type"], "init_ok")
        began = time.monotonic()
        child.stdin.write(json.dumps({"id": 2, "type": "acquire", "ttl_ms": 500, "wait_ms": 0, "slow": True}) + "\n")
        child.stdin.flush()
        time.sleep(0.3)
        child.send_signal(signal.SIGSTOP)
        time.sleep(1.5)
        child.send_signal(signal.SIGCONT)
        reply = json.loads(child.stdout.readline())
        elapsed = time.monotonic() - began
        child.stdin.close()
        child.wait(timeout=10)
        self.assertEqual((reply["id"], reply["outcome"]), (2, "unknown"), reply)
        self.assertGreater(elapsed, 2.0, "the stop spent the bound")
        self.assertEqual(child.returncode, 0)


if __name__ == "__main__":
    unittest.main()
