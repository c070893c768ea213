#!/usr/bin/env python3
"""Runs one scenario binary and checks what it narrates (ctest, label `scenario`).

  scenario_output_test.py --zh -- BINARY [ARGS...]
      Runs BINARY ARGS --lang zh: every narrated line must carry Chinese text.
      Excepted: a step that is a Redis command and its reply ("GET lock  =>  ..."),
      a pushed message ("<- ... pushes ..."), and a script listing ("| ...").
  scenario_output_test.py --expect REGEX [--expect REGEX...] [--expect-not REGEX...] -- BINARY [ARGS...]
      The output (stdout) must match every --expect, each on a line after the
      previous one's (the story is told in order), and no --expect-not.

Either way the binary must exit 0 (the story ended as its lesson expects).
"""
import argparse
import re
import subprocess
import sys

STEP = re.compile(r"^\s*(\d+)\s+[\d.]+ ms  (\S+)\s+(.*)$")
CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")


def excepted(text):
    return "  =>  " in text or text.startswith("<- ") or text.startswith("| ")


def untranslated(lines):
    """The narrated lines of a --lang zh run that carry no Chinese."""
    bad = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        step = STEP.match(line)
        text = step.group(3) if step else line
        if step and excepted(text):
            continue
        if not CJK.search(text):
            bad.append(f"line {number}: {line}")
    return bad


def unmatched(lines, expects, expects_not):
    problems = []
    at = 0
    for pattern in expects:
        regex = re.compile(pattern)
        found = next((i for i in range(at, len(lines)) if regex.search(lines[i])), None)
        if found is None:
            before = any(regex.search(line) for line in lines[:at])
            problems.append(f"no line matches {pattern!r}" + (" after the previous expectation" if before else ""))
        else:
            at = found + 1
    for pattern in expects_not:
        regex = re.compile(pattern)
        problems += [f"line {i + 1} matches {pattern!r}: {line}" for i, line in enumerate(lines) if regex.search(line)]
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--zh", action="store_true", help="run with --lang zh: every narrated line has Chinese")
    parser.add_argument("--expect", action="append", default=[], help="a regex some later line must match")
    parser.add_argument("--expect-not", action="append", default=[], help="a regex no line may match")
    parser.add_argument("--timeout", type=float, default=100)
    parser.add_argument("command", nargs="+", help="BINARY [ARGS...] (after --)")
    args = parser.parse_args()
    if not args.zh and not args.expect and not args.expect_not:
        parser.error("nothing to check: give --zh or --expect")

    command = args.command + (["--lang", "zh"] if args.zh else [])
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"FAIL: {' '.join(command)} did not finish within {args.timeout:.0f} s")
        return 1
    lines = run.stdout.splitlines()
    problems = []
    if run.returncode != 0:
        problems.append(f"exit {run.returncode}, want 0; stderr: {run.stderr.strip()}")
    if args.zh:
        problems += [f"no Chinese: {line}" for line in untranslated(lines)]
    problems += unmatched(lines, args.expect, args.expect_not)
    if problems:
        print(f"FAIL: {' '.join(command)}")
        for problem in problems:
            print("  " + problem)
        print("---- output")
        print(run.stdout, end="")
        return 1
    print(f"PASS: {' '.join(command)} ({len(lines)} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
