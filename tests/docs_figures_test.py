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
  without the field are skipped); a field that is an array of numbers gives
  all of them (one run's repeats: results/counter-demo/counter-demo.json). A
  single figure with `range` says every value equals it ("101 in every run").
- PATH is dotted keys, `[N]` for an array index, `[key=value,...]` for the one
  array element whose fields match (numbers compare as numbers).
- PATH holds no space (a mark with one is reported, not skipped): where the
  field that tells elements apart has spaces, select by index, `rows[3]`.
- `%` multiplies the field by 100 (a share written as a percentage).
- The figure is the last number before the mark on its line (thousands
  separators `,` or a thin space allowed); it matches when the field, rounded
  to the figure's decimals, equals it.

A quoted output is marked the same way, on the line right before its fenced
block: `<!-- verbatim results/counter-demo/table.txt -->`. The block must be
that file, line for line (a committed run's output, not one typed by hand).

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

VERBATIM = re.compile(r"^\s*<!--\s*verbatim\s+(\S+)\s*-->\s*$")
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


def lookup(document, path, many=False):
    """The number at `path`; with `many`, a list of numbers (an array field gives all of them)."""
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
    numbers = value if many and isinstance(value, list) else [value]
    if not numbers or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in numbers):
        raise KeyError("%s is not a number (%r)" % (path, value))
    return [float(v) for v in numbers] if many else float(value)


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
            found = lookup(load(root, os.path.relpath(f, root)), path, many=want_range)
            values += found if want_range else [found]
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
    if want_range and not RANGE.search(text) and SINGLE.search(text):
        quoted = parse_number(SINGLE.search(text).group(1))
        if not all(agrees(v * scale, quoted) for v in values):
            return "the docs say %s every time, the results give %s–%s" % (
                SINGLE.search(text).group(1), min(values) * scale, max(values) * scale)
        return None
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
    if want_range and not match and SINGLE.search(before) and min(values) == max(values):
        match, want_range = SINGLE.search(before), False  # "101 in every run" stays one figure
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


def check_verbatim(root, lines, number, rel_file):
    """The fenced block after line `number` (1-based) against the file it says it quotes."""
    if number >= len(lines) or not lines[number].lstrip().startswith("```"):
        return "a verbatim mark not followed by a fenced block"
    end = next((i for i in range(number + 1, len(lines)) if lines[i].lstrip().startswith("```")), None)
    if end is None:
        return "a verbatim block that never closes"
    try:
        with open(os.path.join(root, rel_file), encoding="utf-8") as f:
            wanted = [line.rstrip() for line in f.read().rstrip("\n").split("\n")]
    except OSError:
        return "no file %s" % rel_file
    quoted = [line.rstrip() for line in lines[number + 1:end]]
    if quoted != wanted:
        first = next((i for i in range(max(len(quoted), len(wanted)))
                      if i >= len(quoted) or i >= len(wanted) or quoted[i] != wanted[i]), 0)
        return "the block differs from %s at its line %d" % (rel_file, first + 1)
    return None


def check_file(root, rel):
    problems, count = [], 0
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        verbatim = VERBATIM.match(line)
        if verbatim:
            count += 1
            problem = check_verbatim(root, lines, number, verbatim.group(1))
            if problem:
                problems.append("%s:%d: %s" % (rel, number, problem))
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
                json.dump({"cost": {"rt": rt}, "points": [{"lock": "x", "n": 8, "share": 0.934}],
                       "repeats": [35, 36, 35], "same": [101, 101]}, f)
        with open(os.path.join(copy, "good.md"), "w") as f:
            f.write("4.0<!-- fig results/a.json cost.rt --> and 93 %<!-- fig results/a.json points[lock=x,n=8].share % -->\n"
                    "from 4.0–5.7<!-- fig results/*.json cost.rt range -->, **5.74**<!-- fig results/b.json cost.rt -->\n"
                    "35–36<!-- fig results/a.json repeats range --> and 101<!-- fig results/a.json same range -->\n")
        with open(os.path.join(copy, "bad.md"), "w") as f:
            f.write("4.1<!-- fig results/a.json cost.rt -->\nx<!-- fig results/a.json cost.none -->\n"
                    "4.0–5.9<!-- fig results/*.json cost.rt range -->\n"
                    "4.0<!-- fig results/a.json points[lock=x y].share -->\n"
                    "35–37<!-- fig results/a.json repeats range -->\n35<!-- fig results/a.json repeats range -->\n")
        with open(os.path.join(copy, "results", "out.txt"), "w") as f:
            f.write("line one\nline two\n")
        with open(os.path.join(copy, "good.md"), "a") as f:
            f.write("<!-- verbatim results/out.txt -->\n```\nline one\nline two\n```\n")
        with open(os.path.join(copy, "bad.md"), "a") as f:
            f.write("<!-- verbatim results/out.txt -->\n```\nline one\nline 2\n```\n")
        good, good_marks = run(copy, ["good.md"])
        bad, _ = run(copy, ["bad.md"])
        with open(os.path.join(copy, "stale.md"), "w") as f:
            f.write("4.1<!-- fig results/a.json cost.rt --> and 90 %<!-- fig results/a.json points[lock=x,n=8].share % -->"
                    " from 3.0–5.9<!-- fig results/*.json cost.rt range -->, **5.00**<!-- fig results/b.json cost.rt -->\n")
        rewritten = update_file(copy, "stale.md")
        stale, _ = run(copy, ["stale.md"])
        ok = not good and good_marks == 7 and len(bad) == 7 and rewritten == 4 and not stale
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
            print("docs figures: the self-test catches a wrong figure, a missing field, a wrong range, an unreadable mark "
                  "and a quoted output that is not its file, and --update rewrites stale figures")
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
