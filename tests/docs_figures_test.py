#!/usr/bin/env python3
"""The figures test (ctest `docs.figures`, label docs): every figure the docs
quote from a run is marked with the result file and field it comes from, and
must equal that field, rounded as the figure is written.

A mark is an HTML comment right after the figure, invisible when rendered:

    38.4<!-- fig results/reference/reentrant-watchdog.json cost.server_commands_per_acquisition -->
    93 %<!-- fig results/bench/scale/scale.json points[lock=fair-queue,clients=64].share % -->
    4.0–5.7<!-- fig results/reference/*.json cost.round_trips_per_acquisition range -->

- FILE is relative to the repository root. With `range` it may be globs joined
  by commas, and the figure is "LOW–HIGH" over every file they match (files
  without the field are skipped).
- PATH is dotted keys, `[N]` for an array index, `[key=value,...]` for the one
  array element whose fields match (numbers compare as numbers).
- PATH holds no space (a mark with one is reported, not skipped): where the
  field that tells elements apart has spaces, select by index, `rows[3]`.
- `%` multiplies the field by 100 (a share written as a percentage).
- The figure is the last number before the mark on its line (thousands
  separators `,` or a thin space allowed); it matches when the field, rounded
  to the figure's decimals, equals it.

Usage: docs_figures_test.py [--source DIR] [--self-test | --update] [FILE.md ...]
With no files: README.md and every .md under docs/. --update rewrites each
marked figure from its field (same decimals and thousands separator): run it
after regenerating a reference, then read the diff, since the prose around a
figure may need to change too.
"""
import argparse
import glob
import json
import os
import re
import sys
import tempfile

MARK = re.compile(r"<!--\s*fig\s+(\S+)\s+(\S+)((?:\s+(?:range|%))*)\s*-->")
NUMBER = r"-?\d{1,3}(?:[,\u2009\u202f]\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?"
RANGE = re.compile(r"(%s)\s*[–-]\s*(%s)\s*%%?\s*\**\s*$" % (NUMBER, NUMBER))
SINGLE = re.compile(r"(%s)\s*%%?\s*\**\s*[a-zA-Zµ/]*\s*\**\s*$" % NUMBER)
STEP = re.compile(r"([^.\[\]]+)|\[([^\]]+)\]")


def parse_number(text):
    cleaned = re.sub(r"[,\u2009\u202f]", "", text)
    decimals = len(cleaned.split(".")[1]) if "." in cleaned else 0
    return float(cleaned), decimals


def select(items, selector):
    wanted = dict(part.split("=", 1) for part in selector.split(","))

    def same(value, text):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return float(text) == value
            except ValueError:
                return False
        return str(value) == text

    found = [i for i in items if isinstance(i, dict) and all(k in i and same(i[k], v) for k, v in wanted.items())]
    if len(found) != 1:
        raise KeyError("[%s] matches %d elements" % (selector, len(found)))
    return found[0]


def lookup(document, path):
    value = document
    for key, bracket in STEP.findall(path):
        if key:
            if not isinstance(value, dict) or key not in value:
                raise KeyError("no field '%s'" % key)
            value = value[key]
        elif bracket.lstrip("-").isdigit():
            value = value[int(bracket)]
        else:
            value = select(value, bracket)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise KeyError("%s is not a number (%r)" % (path, value))
    return float(value)


def load(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return json.load(f)


def field_values(root, pattern, path, want_range):
    if want_range:
        files = sorted(set(f for part in pattern.split(",") for f in glob.glob(os.path.join(root, part))))
    else:
        files = [os.path.join(root, pattern)]
    if not files or not all(os.path.exists(f) for f in files):
        raise KeyError("no file %s" % pattern)
    values = []
    for f in files:
        try:
            values.append(lookup(load(root, os.path.relpath(f, root)), path))
        except KeyError:
            if not want_range:
                raise
    if not values:
        raise KeyError("no file of %s has %s" % (pattern, path))
    return values


def agrees(value, quoted):
    figure, decimals = quoted
    return round(value, decimals) == figure or abs(value - figure) < 0.5 * 10 ** -decimals


def check_mark(root, before, pattern, path, options):
    want_range, percent = "range" in options, "%" in options
    values = field_values(root, pattern, path, want_range)
    scale = 100.0 if percent else 1.0
    text = re.sub(r"</?[a-z]+>", "", before)
    if want_range:
        match = RANGE.search(text)
        if not match:
            return "no 'LOW–HIGH' figure before the mark"
        low, high = parse_number(match.group(1)), parse_number(match.group(2))
        lo, hi = min(values) * scale, max(values) * scale
        if not (agrees(lo, low) and agrees(hi, high)):
            return "the docs say %s–%s, the results give %s–%s" % (match.group(1), match.group(2), lo, hi)
        return None
    match = SINGLE.search(text)
    if not match:
        return "no figure right before the mark"
    quoted = parse_number(match.group(1))
    if not agrees(values[0] * scale, quoted):
        return "the docs say %s, %s has %s" % (match.group(1), pattern, values[0] * scale)
    return None


def formatted(value, like):
    """`value` written as the figure `like` is: its decimals, its thousands separator."""
    _, decimals = parse_number(like)
    text = "%.*f" % (decimals, value)
    separator = next((c for c in like if c in ",\u2009\u202f"), None)
    if separator:
        whole, _, fraction = text.partition(".")
        sign = "-" if whole.startswith("-") else ""
        whole = "{:,}".format(int(whole.lstrip("-"))).replace(",", separator)
        text = sign + whole + ("." + fraction if fraction else "")
    return text


def updated(root, before, pattern, path, options):
    """`before` with its marked figure rewritten from the results (the figure must be there)."""
    want_range, percent = "range" in options, "%" in options
    values = [v * (100.0 if percent else 1.0) for v in field_values(root, pattern, path, want_range)]
    match = (RANGE if want_range else SINGLE).search(before)
    if not match:
        raise ValueError("no figure right before the mark to rewrite")
    if want_range:
        low, high = formatted(min(values), match.group(1)), formatted(max(values), match.group(2))
        return (before[:match.start(1)] + low + before[match.end(1):match.start(2)] + high +
                before[match.end(2):])
    return before[:match.start(1)] + formatted(values[0], match.group(1)) + before[match.end(1):]


def update_file(root, rel):
    """Rewrites every marked figure of `rel` from the results; returns how many changed."""
    full = os.path.join(root, rel)
    with open(full, encoding="utf-8") as f:
        lines = f.readlines()
    changed = 0
    for i, line in enumerate(lines):
        for mark in reversed(list(MARK.finditer(line))):  # right to left: earlier offsets stay valid
            before = line[:mark.start()]
            pattern, path, options = mark.group(1), mark.group(2), mark.group(3).split()
            try:
                new_before = updated(root, before, pattern, path, options)
            except (KeyError, IndexError, ValueError, OSError) as e:
                raise SystemExit("%s:%d: %s" % (rel, i + 1, e.args[0] if e.args else e))
            changed += new_before != before
            line = new_before + line[mark.start():]
        lines[i] = line
    if changed:
        with open(full + ".tmp", "w", encoding="utf-8") as f:
            f.writelines(lines)
        os.replace(full + ".tmp", full)
    return changed


def check_file(root, rel):
    problems, count = [], 0
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            # A mark the pattern cannot read (a space in its path) would check nothing.
            if line.count("<!-- fig") != len(MARK.findall(line)):
                problems.append("%s:%d: a '<!-- fig' mark that does not read as FILE PATH [range] [%%]" % (rel, number))
            for mark in MARK.finditer(line):
                count += 1
                pattern, path, options = mark.group(1), mark.group(2), mark.group(3).split()
                try:
                    problem = check_mark(root, line[:mark.start()], pattern, path, options)
                except (KeyError, IndexError, ValueError, OSError) as e:
                    problem = "%s %s: %s" % (pattern, path, e.args[0] if e.args else e)
                if problem:
                    problems.append("%s:%d: %s" % (rel, number, problem))
    return problems, count


def default_files(root):
    files = ["README.md"] if os.path.exists(os.path.join(root, "README.md")) else []
    for folder, _, names in os.walk(os.path.join(root, "docs")):
        files += sorted(os.path.relpath(os.path.join(folder, n), root) for n in names if n.endswith(".md"))
    return files


def run(root, files):
    problems, marks = [], 0
    for rel in files:
        found, count = check_file(root, rel)
        problems += found
        marks += count
    return problems, marks


def self_test(root):
    """A wrong figure, a missing field and a wrong range are each caught."""
    with tempfile.TemporaryDirectory() as copy:
        os.makedirs(os.path.join(copy, "results"))
        for name, rt in (("a", 4.0), ("b", 5.74)):
            with open(os.path.join(copy, "results", name + ".json"), "w") as f:
                json.dump({"cost": {"rt": rt}, "points": [{"lock": "x", "n": 8, "share": 0.934}]}, f)
        with open(os.path.join(copy, "good.md"), "w") as f:
            f.write("4.0<!-- fig results/a.json cost.rt --> and 93 %<!-- fig results/a.json points[lock=x,n=8].share % -->\n"
                    "from 4.0–5.7<!-- fig results/*.json cost.rt range -->, **5.74**<!-- fig results/b.json cost.rt -->\n")
        with open(os.path.join(copy, "bad.md"), "w") as f:
            f.write("4.1<!-- fig results/a.json cost.rt -->\nx<!-- fig results/a.json cost.none -->\n"
                    "4.0–5.9<!-- fig results/*.json cost.rt range -->\n"
                    "4.0<!-- fig results/a.json points[lock=x y].share -->\n")
        good, good_marks = run(copy, ["good.md"])
        bad, _ = run(copy, ["bad.md"])
        with open(os.path.join(copy, "stale.md"), "w") as f:
            f.write("4.1<!-- fig results/a.json cost.rt --> and 90 %<!-- fig results/a.json points[lock=x,n=8].share % -->"
                    " from 3.0–5.9<!-- fig results/*.json cost.rt range -->, **5.00**<!-- fig results/b.json cost.rt -->\n")
        rewritten = update_file(copy, "stale.md")
        stale, _ = run(copy, ["stale.md"])
        ok = not good and good_marks == 4 and len(bad) == 4 and rewritten == 4 and not stale
        for line in good + bad:
            print("self-test: " + line)
        return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--self-test", action="store_true", help="show that wrong figures are caught")
    parser.add_argument("--update", action="store_true",
                        help="rewrite every marked figure from results/ (after regenerating a reference)")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.update:
        files = args.files or default_files(args.source)
        changed = sum(update_file(args.source, rel) for rel in files)
        print("docs figures: %d marked figures rewritten from results/" % changed)
        return 0
    if args.self_test:
        if self_test(args.source):
            print("docs figures: the self-test catches a wrong figure, a missing field, a wrong range and an unreadable mark, "
                  "and --update rewrites stale figures")
            return 0
        print("docs figures: the self-test did not catch what it planted", file=sys.stderr)
        return 1
    problems, marks = run(args.source, args.files or default_files(args.source))
    for line in problems:
        print(line, file=sys.stderr)
    if problems:
        return 1
    if marks == 0:  # a renamed mark or a lost file must not pass as "nothing to check"
        print("docs figures: no marked figure found in the docs", file=sys.stderr)
        return 1
    print("docs figures: %d marked figures agree with results/" % marks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
