#!/usr/bin/python3
"""scripts/slides (docs/labs/teaching.md): a lab's deck and a scenario's
one-story decks (every lock and flag), in both languages: each is
one self-contained file (nothing loaded from elsewhere), has one slide per step
of every story it tells -- checked against the stories' own JSON documents --
and a keyboard handler, which (when Chromium is installed) moves a headless
browser's deck on a real key press; bad arguments exit 2.

  tests/slides_test.py --source DIR --build DIR [--lab NN] [--story NAME]
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Anything a browser would fetch: a command shown on a slide may name a URL
# (lab 01's `ab ... http://127.0.0.1:8080/test`), an attribute or a CSS import may not.
FETCHES = re.compile(r"""<link\b|\bsrc\s*=|href\s*=\s*["']?(https?:)?//|url\(|@import""", re.I)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check_deck(path):
    """The deck's own checks; returns the step counts its stories declare."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if FETCHES.search(text):
        fail("%s loads something from outside the file: %s" % (path, FETCHES.search(text).group(0)))
    if "addEventListener('keydown'" not in text or "ArrowRight" not in text or "ArrowLeft" not in text:
        fail("%s has no keyboard handler for the arrow keys" % path)
    told = re.findall(r'<section class="slide story" data-steps="(\d+)">', text)
    steps = re.split(r'<section class="slide story"', text)[1:]
    for declared, chunk in zip(told, steps):
        chunk = chunk.split('<section class="slide verdict"')[0]
        if len(re.findall(r'<section class="slide step ', chunk)) != int(declared):
            fail("%s: a story declares %s steps but has another number of step slides" % (path, declared))
    return [int(n) for n in told]


def check_language(lang, decks, stories):
    """Every deck of a language, against the JSON of every story told for it."""
    told = []
    for path in decks:
        told += check_deck(path)
    want = sorted(len(doc["steps"]) for doc in stories)
    if sorted(told) != want:
        fail("%s decks: stories of %s steps, their runs recorded %s" % (lang, sorted(told), want))
    print("ok %s: %d decks, %d stories, %d step slides, one per recorded step"
          % (lang, len(decks), len(told), sum(want)))


SHOWN = "[...document.querySelectorAll('.slide')].findIndex(s => s.classList.contains('current')) + 1"


def keyboard_in_chromium(path):
    """If Chromium is installed: a real → key press (DevTools Input events) shows the next slide."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("skip the keyboard check in Chromium: not installed")
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from story_page_test import Browser, Failure  # its DevTools pipe; one browser, closed after
    try:
        browser = Browser(chromium)
    except (Failure, OSError) as failure:
        fail("Chromium (%s) did not start: %s" % (chromium, failure))
    try:
        browser.call("Page.navigate", session=True, url="file://" + os.path.abspath(path))
        browser.wait_event("Page.loadEventFired")
        seen = [browser.evaluate(SHOWN)]
        for key, code, keycode in (("ArrowRight", "ArrowRight", 39), (" ", "Space", 32), ("ArrowLeft", "ArrowLeft", 37)):
            browser.key(key, code, keycode)
            seen.append(browser.evaluate(SHOWN))
        hash_now = browser.evaluate("location.hash")
    except Failure as failure:
        fail("Chromium: %s" % failure)
    finally:
        browser.close()
    if seen != [1, 2, 3, 2] or hash_now != "#2":
        fail("%s: slides shown after load, →, space, ←: %s (address %s); want [1, 2, 3, 2] and #2"
             % (path, seen, hash_now))
    print("ok keyboard in Chromium: load, →, space, ← show slides %s" % seen)


def usage_errors(script, build):
    for args in (["--lab", "4"], ["--build", "/nonexistent"], ["--lang", "fr"], ["--story", "no_such_story"]):
        proc = subprocess.run([script, "--build", build] + args, capture_output=True, text=True)
        if proc.returncode != 2 or not proc.stderr.strip():
            fail("scripts/slides %s exited %d, not 2 with a message" % (" ".join(args), proc.returncode))
    print("ok usage errors exit 2")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--lab", default="04")
    ap.add_argument("--story", default="watchdog_renewal", help="a scenario with a flag: its one-story decks")
    args = ap.parse_args()
    script = os.path.join(args.source, "scripts", "slides")
    usage_errors(script, args.build)
    with tempfile.TemporaryDirectory() as tmp:
        json_dir = os.path.join(tmp, "json")
        os.mkdir(json_dir)
        made = subprocess.run([script, "--build", args.build, "--out", tmp, "--lab", args.lab,
                               "--story", args.story, "--json-dir", json_dir])
        if made.returncode != 0:
            fail("scripts/slides --lab %s --story %s exited %d" % (args.lab, args.story, made.returncode))
        docs = [json.load(open(p, encoding="utf-8")) for p in glob.glob(os.path.join(json_dir, "*.json"))]
        for lang, folder in (("en", tmp), ("zh", os.path.join(tmp, "zh"))):
            decks = glob.glob(os.path.join(folder, args.lab + "-*.html"))
            stories = glob.glob(os.path.join(folder, "stories", args.story + ".*.html"))
            if len(decks) != 1 or len(stories) < 2:
                fail("%s: want lab %s's deck and %s's story decks in %s, found %s"
                     % (lang, args.lab, args.story, folder, decks + stories))
            check_language(lang, decks + stories, [d for d in docs if d.get("lang", "en") == lang])
        keyboard_in_chromium(glob.glob(os.path.join(tmp, "zh", args.lab + "-*.html"))[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
