#!/usr/bin/env python3
"""The step-through pages in a real browser (ctest label `view`).

Loads every page given (a scenario's --html page: harness/report/story_page.*)
in Debian's headless Chromium, driven through the DevTools protocol over
--remote-debugging-pipe (JSON messages on fds 3 and 4: no WebSocket, no
library), and checks on each page that:

  - it opens at step 1, highlighted in the list, on the timeline (its marker)
    and under the cursor, with Back disabled;
  - ArrowRight (a real key event) moves the highlight to step 2, a click on the
    Next button (a real mouse event at the button) to step 3, ArrowLeft back to
    2, End to the last step (Next then disabled), Home to step 1;
  - what lies ahead is hidden (the next step in the list, the verdict) until
    the class gets there, and the "ahead" button shows it;
  - it asked for nothing over the network (every request is the page itself)
    and threw no script error.

    story_page_test.py [--screenshot DIR] PAGE.html...   (or a directory of pages)
    story_page_test.py --self-test    (a Chromium that breaks at start leaves no process, no profile)

Exit 0 when every page passes, 1 when one fails or Chromium is missing.
"""
import argparse
import base64
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--window-size=1500,950", "--remote-debugging-pipe",
]
TIMEOUT_S = 30


class Failure(Exception):
    pass


class Browser:
    """One headless Chromium and its DevTools pipe; one page target, attached."""

    def __init__(self, chromium):
        self.profile = tempfile.mkdtemp(prefix="locklab-chromium-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # The pipe protocol reads commands on fd 3 and writes on fd 4: the shell puts them there.
        script = 'exec "$0" "$@" 3<&%d 4>&%d' % (to_browser_r, from_browser_w)
        try:
            self.process = subprocess.Popen(
                ["sh", "-c", script, chromium, *CHROMIUM_FLAGS, "--user-data-dir=" + self.profile, "about:blank"],
                pass_fds=(to_browser_r, from_browser_w), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except BaseException:
            for fd in (to_browser_r, from_browser_w, self.to_browser, self.from_browser):
                os.close(fd)
            shutil.rmtree(self.profile, ignore_errors=True)
            raise
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        try:  # a browser that does not get this far leaves no process and no profile behind
            targets = self.call("Target.getTargets")["targetInfos"]
            page = next(t for t in targets if t["type"] == "page")
            self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
            for domain in ("Page", "Runtime", "Network"):
                self.call(domain + ".enable", session=True)
        except BaseException:
            self.close(graceful=False)
            raise

    def close(self, graceful=True):
        if graceful:
            try:
                self.call("Browser.close")
            except Exception:
                pass
        try:
            self.process.wait(timeout=10 if graceful else 0.5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self.to_browser, self.from_browser):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise Failure("Chromium did not answer within %d s" % TIMEOUT_S)
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise Failure("Chromium closed its DevTools pipe (exit %s)" % self.process.poll())
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method, session=False, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise Failure("%s: %s" % (method, reply["error"].get("message")))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method):
        deadline = time.monotonic() + TIMEOUT_S
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        while True:
            event = self._message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise Failure("script error in the test's probe: %s" % result["exceptionDetails"].get("text"))
        return result["result"].get("value")

    def key(self, key, code, keycode):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=code,
                      windowsVirtualKeyCode=keycode, nativeVirtualKeyCode=keycode)

    def click(self, selector):
        box = self.evaluate("(() => { const r = document.querySelector(%s).getBoundingClientRect();"
                            " return [r.left + r.width / 2, r.top + r.height / 2]; })()" % json.dumps(selector))
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1], button="left",
                      clickCount=1)


# What the page shows as its current step, seen three ways: the list, the timeline marker, the cursor.
HIGHLIGHT = """(() => {
  const items = [...document.querySelectorAll('#steps .step.current')].map(li => Number(li.dataset.step));
  const markers = [...document.querySelectorAll('#timeline .marker.current')].map(g => Number(g.dataset.step));
  const marker = document.querySelector('#timeline .marker.current circle');
  const cursor = document.querySelector('#timeline .cursor');
  return {items, markers, body: Number(document.body.dataset.step),
          total: document.querySelectorAll('#steps .step').length,
          cursorOnMarker: !!marker && Math.abs(Number(marker.getAttribute('cx')) - Number(cursor.getAttribute('x1'))) < 0.5,
          back: document.getElementById('back').disabled, next: document.getElementById('next').disabled,
          nextHidden: !!document.getElementById('step-' + (Number(document.body.dataset.step) + 1)) &&
            getComputedStyle(document.getElementById('step-' + (Number(document.body.dataset.step) + 1))).visibility === 'hidden',
          verdictHidden: getComputedStyle(document.querySelector('.verdict')).visibility === 'hidden',
          now: document.querySelector('#now .head') ? document.querySelector('#now .head').textContent : ''};
})()"""


def expect_step(browser, want, after):
    seen = browser.evaluate(HIGHLIGHT)
    if seen["items"] != [want] or seen["markers"] != [want] or seen["body"] != want:
        raise Failure("after %s: highlighted list %s, timeline %s, page %s; want step %d"
                      % (after, seen["items"], seen["markers"], seen["body"], want))
    if not seen["cursorOnMarker"]:
        raise Failure("after %s: the timeline's cursor is not on step %d's marker" % (after, want))
    # The state panel's head in the page's language (report/page_words.cpp: "Step {0} of {1}").
    if not seen["now"].startswith(("Step %d of %d" % (want, seen["total"]), "第 %d 步，共 %d 步" % (want, seen["total"]))):
        raise Failure("after %s: the state panel says %r" % (after, seen["now"]))
    return seen


def check_page(browser, page, screenshot_dir):
    url = page.resolve().as_uri()
    browser.events.clear()
    browser.call("Page.navigate", session=True, url=url)
    browser.wait_event("Page.loadEventFired")
    first = expect_step(browser, 1, "loading")
    if first["total"] < 3:
        raise Failure("only %d steps: nothing to step through" % first["total"])
    if not first["back"]:
        raise Failure("Back is enabled at step 1")
    browser.key("ArrowRight", "ArrowRight", 39)
    expect_step(browser, 2, "ArrowRight")
    browser.click("#next")
    expect_step(browser, 3, "a click on Next")
    browser.key("ArrowLeft", "ArrowLeft", 37)
    second = expect_step(browser, 2, "ArrowLeft")
    if not (second["nextHidden"] and second["verdictHidden"]):
        raise Failure("at step 2, step 3 or the verdict is visible: nothing should be shown ahead")
    browser.click("#ahead")
    shown = browser.evaluate(HIGHLIGHT)
    browser.click("#ahead")
    if shown["nextHidden"] or shown["verdictHidden"]:
        raise Failure("the ahead button did not show what lies ahead")
    if screenshot_dir:
        for _ in range(first["total"] // 2 - 2):
            browser.key("ArrowRight", "ArrowRight", 39)
        shot = browser.call("Page.captureScreenshot", session=True, format="png")
        (screenshot_dir / (page.stem + ".png")).write_bytes(base64.b64decode(shot["data"]))
    browser.key("End", "End", 35)
    last = expect_step(browser, first["total"], "End")
    if not last["next"]:
        raise Failure("Next is enabled at the last step")
    if last["verdictHidden"]:
        raise Failure("the verdict is still hidden at the last step")
    browser.key("Home", "Home", 36)
    expect_step(browser, 1, "Home")
    problems = []
    for event in browser.events:
        method = event.get("method")
        if method == "Network.requestWillBeSent":
            requested = event["params"]["request"]["url"]
            if requested != url and not requested.startswith("data:"):
                problems.append("asked the network for " + requested)
        elif method == "Runtime.exceptionThrown":
            details = event["params"]["exceptionDetails"]
            problems.append("script error: %s" % details.get("exception", {}).get("description", details.get("text")))
    if problems:
        raise Failure("; ".join(problems))
    return first["total"]


def pages_of(arguments):
    pages = []
    for argument in arguments:
        path = pathlib.Path(argument)
        pages.extend(sorted(path.glob("*.html")) if path.is_dir() else [path])
    return pages


def self_test():
    """A Chromium that breaks at start -- it closes its DevTools pipe, then lingers --
    makes Browser() raise, and leaves neither its process nor its profile behind."""
    with tempfile.TemporaryDirectory(prefix="locklab-fake-chromium-") as work:
        fake, pid_file = os.path.join(work, "chromium"), os.path.join(work, "pid")
        with open(fake, "w") as script:
            script.write('#!/bin/sh\necho $$ > "%s"\n'
                         'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done\n'
                         'exec sleep 60\n' % pid_file)
        os.chmod(fake, 0o755)
        # The profile goes to a folder of our own: another test's Chromium
        # (ctest -j runs the page tests side by side) makes profiles in the
        # shared temporary folder meanwhile, which are not ours to count.
        own_tmp = os.path.join(work, "tmp")
        os.mkdir(own_tmp)
        shared_tmp, tempfile.tempdir = tempfile.tempdir, own_tmp
        try:
            Browser(fake).close()
            return "Browser() took a Chromium that closed its DevTools pipe"
        except Failure:
            pass
        finally:
            tempfile.tempdir = shared_tmp
        pid = int(open(pid_file).read())
        try:
            os.kill(pid, 0)
            os.kill(pid, 9)
            return "the broken Chromium (pid %d) was left running" % pid
        except ProcessLookupError:
            pass
        left = set(pathlib.Path(own_tmp).glob("locklab-chromium-*"))
        if left:
            return "its profile was left: " + " ".join(str(path) for path in left)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--screenshot", type=pathlib.Path, help="write each page mid-story as DIR/<page>.png")
    parser.add_argument("--self-test", action="store_true", help="a Chromium that breaks at start leaves nothing")
    parser.add_argument("pages", nargs="*", help="pages, or directories of pages")
    options = parser.parse_args()
    if options.self_test:
        problem = self_test()
        print("story_page_test --self-test: " + (problem or "PASS: nothing left by a Chromium that broke at start"),
              file=sys.stderr if problem else sys.stdout)
        return 1 if problem else 0
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("story_page_test: chromium is not installed (Debian package `chromium`; scripts/setup installs it)",
              file=sys.stderr)
        return 1
    pages = pages_of(options.pages)
    if not pages:
        print("story_page_test: no pages in %s" % " ".join(options.pages), file=sys.stderr)
        return 1
    if options.screenshot:
        options.screenshot.mkdir(parents=True, exist_ok=True)
    failed = 0
    try:
        browser = Browser(chromium)
    except (Failure, OSError) as failure:
        print("story_page_test: Chromium (%s) did not start: %s" % (chromium, failure), file=sys.stderr)
        return 1
    try:
        for page in pages:
            try:
                steps = check_page(browser, page, options.screenshot)
                print("PASS %s (%d steps)" % (page.name, steps))
            except Failure as failure:
                failed += 1
                print("FAIL %s: %s" % (page.name, failure))
    finally:
        browser.close()
    print("story pages: %d passed, %d failed" % (len(pages) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
