#!/usr/bin/env python3
"""--step-through and --pace on a real pseudo-terminal (ctest label `view`).

    step_through_test.py SCENARIO_BINARY TEST_NAME

Runs the scenario binary (a story told with its default lock) and checks one
behaviour (TEST_NAME):

  enter_advances_one_step  on a pty (stdin and stdout TTYs) nothing is printed
                           past the header until Enter, although the story has
                           already ended (its --json is written); each Enter
                           shows exactly one more step; after the last step one
                           more Enter shows the verdict; exit 0
  q_plays_the_rest         q + Enter at the first prompt prints every step and
                           the verdict at once; exit 0
  no_tty_runs_through      stdout a pipe (stdin a pty that nobody types into):
                           every step and the verdict, no prompt, exit 0
  pace_without_tty         --pace 5 with no terminal at all: every step, exit 0
  zh_prompts               --lang zh: the prompts in Chinese (no English prompt
                           left), q + Enter then 看结论 and the verdict (结论); exit 0

Every wait is a polled condition with a deadline; no sleeps.
"""
import json
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time

DEADLINE_S = 60
STEP = re.compile(rb"^\s*(\d+)\s+[\d.]+ ms\s", re.M)
NEXT_PROMPT = b"[Enter] next step"
VERDICT_PROMPT = b"[Enter] the verdict"


class Terminal:
    """The scenario on a pseudo-terminal, as a teacher's shell would run it."""

    def __init__(self, argv):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execv(argv[0], argv)
            finally:
                os._exit(127)
        self.output = b""

    def read_until(self, condition, what):
        deadline = time.monotonic() + DEADLINE_S
        while not condition(self.output):
            left = deadline - time.monotonic()
            if left <= 0:
                fail("waited %d s for %s; output so far:\n%s" % (DEADLINE_S, what, self.output.decode(errors="replace")))
            if select.select([self.fd], [], [], left)[0]:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # EIO: the child closed the terminal
                    chunk = b""
                if not chunk:
                    if condition(self.output):
                        return
                    fail("the scenario ended before %s; output:\n%s" % (what, self.output.decode(errors="replace")))
                self.output += chunk

    def read_available(self):
        while select.select([self.fd], [], [], 0)[0]:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                return
            if not chunk:
                return
            self.output += chunk

    def type(self, text):
        os.write(self.fd, text)

    def exit_status(self):
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            self.read_available()
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                return os.waitstatus_to_exitcode(status)
            select.select([self.fd], [], [], 0.05)  # a bounded wait for more output or the exit
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        fail("the scenario did not exit within %d s" % DEADLINE_S)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


ANSI = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]")


def steps_in(output):
    return [int(n) for n in STEP.findall(ANSI.sub(b"", output))]


def wait_for_file(path):
    deadline = time.monotonic() + DEADLINE_S
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            fail("the story never finished: %s was not written" % path)
        select.select([], [], [], 0.02)  # poll the file system every 20 ms
    with open(path) as document:
        return json.load(document)


def enter_advances_one_step(binary, work):
    record = os.path.join(work, "story.json")
    terminal = Terminal([binary, "--step-through", "--json", record])
    terminal.read_until(lambda out: NEXT_PROMPT in out, "the first prompt")
    total = len(wait_for_file(record)["steps"])  # the story is over: every step is recorded
    terminal.read_available()
    if steps_in(terminal.output):
        fail("steps were printed before the first Enter: %s" % steps_in(terminal.output))
    if b"verdict:" in terminal.output:
        fail("the verdict was printed before the first Enter")
    for k in range(1, total + 1):
        terminal.type(b"\n")
        prompt = NEXT_PROMPT if k < total else VERDICT_PROMPT
        terminal.read_until(lambda out: out.count(prompt) >= (k + 1 if k < total else 1), "the prompt after step %d" % k)
        shown = steps_in(terminal.output)
        if shown != list(range(1, k + 1)):
            fail("after %d Enter(s) the steps shown are %s" % (k, shown))
    if b"verdict:" in terminal.output:
        fail("the verdict came before its own Enter")
    terminal.type(b"\n")
    terminal.read_until(lambda out: b"verdict:" in out, "the verdict")
    status = terminal.exit_status()
    if status != 0:
        fail("exit %d" % status)
    print("PASS: %d steps, one per Enter, then the verdict" % total)


def q_plays_the_rest(binary, work):
    terminal = Terminal([binary, "--step-through"])
    terminal.read_until(lambda out: NEXT_PROMPT in out, "the first prompt")
    terminal.type(b"q\n")
    terminal.read_until(lambda out: b"verdict:" in out, "the verdict after q")
    status = terminal.exit_status()
    shown = steps_in(terminal.output)
    if status != 0 or not shown or shown != list(range(1, len(shown) + 1)):
        fail("exit %d, steps %s" % (status, shown))
    if terminal.output.count(NEXT_PROMPT) != 1:
        fail("prompted again after q")
    print("PASS: q printed steps 1-%d and the verdict at once" % len(shown))


def run_without_terminal(argv, stdin):
    try:
        done = subprocess.run(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        fail("%s waited: it did not finish within %d s" % (" ".join(argv[1:]), DEADLINE_S))
    shown = steps_in(done.stdout)
    if done.returncode != 0 or not shown or shown != list(range(1, len(shown) + 1)):
        fail("exit %d, steps %s:\n%s" % (done.returncode, shown, done.stdout.decode(errors="replace")))
    if NEXT_PROMPT in done.stdout or b"verdict:" not in done.stdout:
        fail("prompted, or no verdict:\n" + done.stdout.decode(errors="replace"))
    return shown


def no_tty_runs_through(binary, work):
    controller, typist_end = os.openpty()  # stdin is a terminal nobody types into; stdout is a pipe
    try:
        shown = run_without_terminal([binary, "--step-through"], typist_end)
    finally:
        os.close(controller)
        os.close(typist_end)
    print("PASS: stdout not a terminal: steps 1-%d and the verdict, nothing waited" % len(shown))


def zh_prompts(binary, work):
    terminal = Terminal([binary, "--step-through", "--lang", "zh"])
    terminal.read_until(lambda out: "[Enter] 下一步".encode() in out, "the first Chinese prompt")
    if NEXT_PROMPT in terminal.output:
        fail("the English prompt was printed under --lang zh")
    terminal.type(b"q\n")
    terminal.read_until(lambda out: "结论".encode() in out, "the verdict after q")
    status = terminal.exit_status()
    if status != 0:
        fail("exit %d" % status)
    print("PASS: --lang zh prompts in Chinese, q played the rest")


def pace_without_tty(binary, work):
    shown = run_without_terminal([binary, "--pace", "5"], subprocess.DEVNULL)
    print("PASS: --pace 5 without a terminal: steps 1-%d and the verdict" % len(shown))


TESTS = {f.__name__: f for f in (enter_advances_one_step, q_plays_the_rest, no_tty_runs_through, pace_without_tty,
                                  zh_prompts)}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in TESTS:
        print("usage: step_through_test.py SCENARIO_BINARY {%s}" % "|".join(TESTS), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="locklab-step-through-") as work:
        TESTS[sys.argv[2]](sys.argv[1], work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
