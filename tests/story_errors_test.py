#!/usr/bin/env python3
"""The story binaries' own messages honour --lang zh (issue 28, item 4; ctest, label `scenario`).

  story_errors_test.py --catalog --source DIR
      Every message the story kit and the scenario mains write through the
      catalog -- text("..."), say("..."), die("..."), must(result, "..."),
      wait_for("...") with a plain literal -- is a key of
      harness/scenario/messages.cpp's catalog. A failure message is printed
      only when a story cannot be told, so no run can find a missing one: this
      reads the sources instead.
  story_errors_test.py --self-test
      The scanner finds a planted key the catalog lacks, in each call form.
  story_errors_test.py --usage -- BINARY [ARGS...]
      BINARY ARGS with --lang zh and a bad --lock, an unknown option, and a
      --json into a missing folder: each exits 2 with one stderr line in
      Chinese; the same bad --lock without --lang stays English. And with
      LOCKLAB_REDIS_SERVER naming no file (a story that cannot start its
      server): exit 1, one stderr line in Chinese.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")
# The argument that is the catalog key, by call.
KEY_ARG = {"text": 0, "say": 0, "die": 0, "must": 1, "wait_for": 0}
CALL = re.compile(r"(?<![\w.:>])(?:story\.|story->|narrator\.|narrator_->|harness::)?\b(text|say|die|must|wait_for)\(")
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def skip_quoted(source, i):
    """The index of the quote that closes the literal opened at `i`."""
    if source[i] == "'" and source[i - 1].isalnum():
        return i  # a digit separator (100'000), no literal
    if source[i] == '"' and source[i - 1] == "R":
        return source.index(')' + source[i + 1:source.index("(", i)] + '"', i)  # R"d(...)d"
    j = i + 1
    while source[j] != source[i]:
        j += 2 if source[j] == "\\" else 1
    return j


def without_comments(source):
    """`source` with its // and /* */ comments blanked (a quote in a comment is no literal)."""
    out, i = [], 0
    while i < len(source):
        if source[i] in "\"'":
            j = skip_quoted(source, i)
            out.append(source[i:j + 1])
            i = j + 1
        elif source.startswith("//", i) or source.startswith("/*", i):
            end = source.find("\n" if source[i + 1] == "/" else "*/", i)
            end = len(source) if end < 0 else end + (0 if source[i + 1] == "/" else 2)
            out.append(re.sub(r"[^\n]", " ", source[i:end]))
            i = end
        else:
            out.append(source[i])
            i += 1
    return "".join(out)


def arguments(source, start):
    """The top-level arguments of the call whose '(' is just before `start`, as source text."""
    args, depth, at, i = [], 0, start, start
    while i < len(source):
        c = source[i]
        if c in "\"'":
            i = skip_quoted(source, i)
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                args.append(source[at:i].strip())
                return args
            depth -= 1
        elif c == "," and depth == 0:
            args.append(source[at:i].strip())
            at = i + 1
        i += 1
    return args


def literal_text(arg):
    """The string an argument made only of adjacent string literals spells; None for anything else."""
    if not arg.startswith('"') or LITERAL.sub("", arg).strip():
        return None
    return "".join(bytes(m, "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
                   for m in LITERAL.findall(arg))


def catalog_keys(messages_cpp):
    """The English keys of kCatalog in messages.cpp."""
    text = messages_cpp.read_text(encoding="utf-8")
    body = text[text.index("kCatalog = {"):text.index("\n};", text.index("kCatalog = {"))]
    keys = set()
    for entry in re.finditer(r"\{\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+),", body):
        keys.add(literal_text(entry.group(1).strip()))
    return keys


def used_keys(path):
    """(line, key) of every catalog call with a plain literal key in one source file."""
    source = without_comments(path.read_text(encoding="utf-8"))
    found = []
    for call in CALL.finditer(source):
        args = arguments(source, call.end())
        index = KEY_ARG[call.group(1)]
        if index < len(args):
            key = literal_text(args[index])
            if key is not None and re.search(r"[A-Za-z]", key):  # "{}", "  | {}": no words to translate
                found.append((source.count("\n", 0, call.start()) + 1, key))
    return found


def missing(root):
    keys = catalog_keys(root / "harness/scenario/messages.cpp")
    files = sorted((root / "scenarios").rglob("*.cpp")) + sorted((root / "harness/scenario").glob("*.cpp"))
    files += sorted((root / "harness/scenario").glob("*.h"))
    problems, seen = [], 0
    for path in files:
        if path.name == "messages.cpp":
            continue
        for line, key in used_keys(path):
            seen += 1
            if key not in keys:
                problems.append(f"{path.relative_to(root)}:{line}: not in the catalog: {key!r}")
    return problems, seen


def check_catalog(root):
    problems, seen = missing(root)
    for problem in problems:
        print("FAIL " + problem)
    if seen < 50:
        print(f"FAIL only {seen} catalog calls found: the scanner has gone blind")
        return 1
    print(f"{'FAIL' if problems else 'PASS'}: {seen} catalog calls, {len(problems)} keys missing")
    return 1 if problems else 0


def self_test():
    plants = ['story.die("a planted failure {}", x);', 'auto s = story.must(start(), "a planted means");',
              'say("a planted " "line");', 'return text("a planted text");', 'story.wait_for("a planted wait", c);']
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "harness/scenario").mkdir(parents=True)
        (root / "scenarios").mkdir()
        (root / "harness/scenario/messages.cpp").write_text(
            'const std::vector<Message> kCatalog = {\n    {"known {}", "已知 {}"},\n};\n', encoding="utf-8")
        body = 'void f() {\n  story.die("known {}", 1);  // "a comment"\n' + "\n".join(plants) + "\n}\n"
        (root / "scenarios/planted.cpp").write_text(body, encoding="utf-8")
        problems, seen = missing(root)
    want = ["a planted failure {}", "a planted means", "a planted line", "a planted text", "a planted wait"]
    caught = [w for w in want if any(repr(w) in p for p in problems)]
    ok = caught == want and seen == len(want) + 1 and len(problems) == len(want)
    print(f"{'PASS' if ok else 'FAIL'}: the scanner caught {len(caught)} of {len(want)} planted keys "
          f"({seen} calls seen){'' if ok else ': ' + '; '.join(problems)}")
    return 0 if ok else 1


def run(command, env=None):
    done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                          env=None if env is None else {**os.environ, **env})
    return done.returncode, done.stderr.strip().splitlines(), done.stdout


def check_usage(command, skip, server_exit):
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        # name, arguments, in Chinese, a word the line names, the exit status, the environment
        no_server = {"LOCKLAB_REDIS_SERVER": f"{tmp}/no-such-redis-server"}
        cases = [("--lock bogus", ["--lock", "bogus"], True, "bogus", 2, None),
                 ("an unknown option", ["--no-such-option"], True, "--no-such-option", 2, None),
                 ("--json into a missing folder", ["--json", f"{tmp}/no-such-dir/story.json"], True, "no-such-dir",
                  2, None),
                 ("--lock bogus in English", ["--lock", "bogus"], False, "bogus", 2, None),
                 ("no redis-server to start", [], True, "no-such-redis-server", server_exit, no_server)]
        for name, extra, zh, word, want, env in cases:
            if any(option in extra for option in skip):
                continue
            code, err, out = run(command + extra + (["--lang", "zh"] if zh else []), env)
            line = err[0] if err else ""
            if code != want:
                problems.append(f"{name}: exit {code}, want {want}")
            if len(err) != 1:
                problems.append(f"{name}: {len(err)} stderr lines, want 1: {err}")
            if word not in line:
                problems.append(f"{name}: the line does not name {word!r}: {line}")
            if bool(CJK.search(line)) != zh:
                problems.append(f"{name}: {'no Chinese' if zh else 'Chinese'} in: {line}")
            if "verdict" in out or "结论" in out:  # found before the story, or the story stopped
                problems.append(f"{name}: the story was told: {out[:200]}")
            print(f"  {name}: {line}")
    for problem in problems:
        print("FAIL " + problem)
    print(f"{'FAIL' if problems else 'PASS'}: {' '.join(command)}")
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--catalog", action="store_true")
    mode.add_argument("--self-test", action="store_true")
    mode.add_argument("--usage", action="store_true")
    parser.add_argument("--source", type=pathlib.Path)
    parser.add_argument("--skip", action="append", default=[],
                        help="--usage: leave out the cases that give this option (counter_demo has no --json)")
    parser.add_argument("--server-exit", type=int, default=1,
                        help="--usage: the exit status without a redis-server (a story: 1; counter_demo: 2, "
                             "a LOCKLAB_REDIS_SERVER that names no program being a usage error there)")
    parser.add_argument("command", nargs="*", help="BINARY [ARGS...] (--usage, after --)")
    args = parser.parse_args()
    if args.catalog:
        if not args.source:
            parser.error("--catalog needs --source DIR")
        return check_catalog(args.source)
    if args.self_test:
        return self_test()
    if not args.command:
        parser.error("--usage needs -- BINARY [ARGS...]")
    return check_usage(args.command, args.skip, args.server_exit)


if __name__ == "__main__":
    sys.exit(main())
