#!/usr/bin/env python3
"""The Chinese labs' test (ctest `docs.labs_zh`, label docs): docs/labs/zh/ is
the English labs, answer sheets, README and teacher's kit in Chinese, kept in
step by their outline and their commands (issue 19 §6, issue 28 item 4).

- Every English page (docs/labs/README.md, teaching.md, NN-*.md, answers/NN-*.md) has a
  twin at the same path under docs/labs/zh/, and every zh page has an English
  original.
- A page's ```sh blocks (runnable, runnable-later and shown alike) hold the
  same commands, in the same order and block by block of the same kind, as its
  twin's. A command is compared as shell words (`#` comments dropped, so a
  comment may be translated; a line ending in `\\` continues).
- A page's outline is its twin's, section by section: the same headings (by
  level, their words translated) in the same order, and the same number of
  ```sh blocks under each (a block moved to another section is drift even
  when the commands still line up).
- The one difference allowed: each scenario command (build/default/scenarios/…)
  of a zh page carries `--lang zh`, which its English twin does not; no other
  command carries `--lang` (`locklab` has none).

The zh blocks are not run: docs.lab.NN-* runs the English pages' blocks, which
are the same commands; the figures test checks the zh pages' marked figures.

Usage: docs_zh_test.py [--source DIR] [--self-test]
"""
import argparse
import os
import re
import shlex
import sys
import tempfile

PAGE = re.compile(r"^\d\d-.*\.md$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
SCENARIO = "build/default/scenarios/"


def pages(labs):
    """The pages of one language: README.md, teaching.md, NN-*.md, answers/NN-*.md (relative paths)."""
    found = [n for n in ("README.md", "teaching.md") if os.path.exists(os.path.join(labs, n))]
    for folder in ("", "answers"):
        where = os.path.join(labs, folder)
        if os.path.isdir(where):
            found += sorted(os.path.join(folder, n) if folder else n for n in os.listdir(where) if PAGE.match(n))
    return found


def sh_blocks(path):
    """[(kind, first line number, [(line number, text)])] for each ```sh block of a page.

    Fences follow CommonMark: a closing fence is the opening's character, at
    least as long; a backtick fence's info string has no backtick (so an inline
    ```` ```sh ```` in a sentence opens nothing)."""
    blocks, inside, current = [], None, None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            match = FENCE.match(line)
            if inside is None:
                if not match or (match.group(1)[0] == "`" and "`" in match.group(2)):
                    continue
                inside = match.group(1)
                words = match.group(2).replace("{", " ").replace("}", " ").split()
                if words and words[0] == "sh":
                    kind = "runnable-later" if "runnable-later" in words else "runnable" if "runnable" in words else "shown"
                    current = (kind, number, [])
                continue
            if match and match.group(1)[0] == inside[0] and len(match.group(1)) >= len(inside) \
                    and not match.group(2).strip():
                if current:
                    blocks.append(current)
                inside, current = None, None
                continue
            if current:
                current[2].append((number, line))
    if inside is not None:
        raise ValueError("%s: a fence is never closed" % path)
    return blocks


HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def outline(path):
    """[(line number, level, heading text, sh blocks under it)] of a page; the text before
    its first heading is section 0 (line 0, level 0). Headings inside fences are code."""
    sections, inside = [[0, 0, "(before the first heading)", 0]], None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            match = FENCE.match(line)
            if inside is None:
                if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                    inside = match.group(1)
                    words = match.group(2).replace("{", " ").replace("}", " ").split()
                    if words and words[0] == "sh":
                        sections[-1][3] += 1
                    continue
                heading = HEADING.match(line)
                if heading:
                    sections.append([number, len(heading.group(1)), heading.group(2), 0])
            elif match and match.group(1)[0] == inside[0] and len(match.group(1)) >= len(inside) \
                    and not match.group(2).strip():
                inside = None
    return sections


def compare_outline(en_path, zh_path, rel):
    """The problems of a zh page's headings and blocks per section against its English twin's."""
    en, zh = outline(en_path), outline(zh_path)
    problems = []
    for (en_at, en_level, en_text, en_blocks), (zh_at, zh_level, zh_text, zh_blocks) in zip(en, zh):
        where = "zh/%s:%d %r (English line %d %r)" % (rel, zh_at, zh_text, en_at, en_text)
        if en_level != zh_level:
            problems.append("%s: a level-%d heading, the English one is level %d" % (where, zh_level, en_level))
            break  # the rest is out of step: one line says where it starts
        if en_blocks != zh_blocks:
            problems.append("%s: %d sh blocks in this section, the English one has %d" % (where, zh_blocks, en_blocks))
    if len(en) != len(zh):
        problems.append("zh/%s: %d headings, the English page has %d" % (rel, len(zh) - 1, len(en) - 1))
    return problems


def commands(lines):
    """[(line number, [words])] of a block: continuations joined, comments and blank lines dropped."""
    result, pending, start = [], "", None
    for number, text in lines:
        if start is None:
            start = number
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        words = shlex.split(pending + text, comments=True)
        if words:
            result.append((start, words))
        pending, start = "", None
    if pending:
        raise ValueError("line %d: a continuation never ends" % start)
    return result


def program(words):
    """The command's program: its first word after VAR=value assignments ('' when none)."""
    for word in words:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            return word
    return ""


def without_lang(words):
    """The words with one `--lang zh` removed, and how many `--lang` remain."""
    for i in range(len(words) - 1):
        if words[i] == "--lang" and words[i + 1] == "zh":
            rest = words[:i] + words[i + 2:]
            return rest, sum(1 for w in rest if w == "--lang" or w.startswith("--lang="))
    return None, sum(1 for w in words if w == "--lang" or w.startswith("--lang="))


def compare_command(en, zh):
    """A problem with one zh command against its English twin, or None."""
    (en_at, en_words), (zh_at, zh_words) = en, zh
    if any(w == "--lang" or w.startswith("--lang=") for w in en_words):
        return "English line %d carries --lang: the English pages run in English" % en_at
    if program(zh_words).startswith(SCENARIO):
        stripped, left = without_lang(zh_words)
        if stripped is None:
            return "line %d: the scenario command has no --lang zh" % zh_at
        if left:
            return "line %d: the scenario command has --lang more than once" % zh_at
        zh_words = stripped
    elif any(w == "--lang" or w.startswith("--lang=") for w in zh_words):
        return "line %d: only scenario commands take --lang (this is %s)" % (zh_at, program(zh_words) or "no command")
    if zh_words != en_words:
        return "line %d differs from English line %d: %s  vs  %s" % (
            zh_at, en_at, shlex.join(zh_words), shlex.join(en_words))
    return None


def compare_page(en_path, zh_path, rel):
    problems = []
    try:
        en_blocks, zh_blocks = sh_blocks(en_path), sh_blocks(zh_path)
    except ValueError as e:
        return ["%s: %s" % (rel, e)]
    if len(en_blocks) != len(zh_blocks):
        problems.append("zh/%s: %d sh blocks, the English page has %d" % (rel, len(zh_blocks), len(en_blocks)))
    for (en_kind, en_line, en_lines), (zh_kind, zh_line, zh_lines) in zip(en_blocks, zh_blocks):
        where = "zh/%s:%d (English line %d)" % (rel, zh_line, en_line)
        if en_kind != zh_kind:
            problems.append("%s: a %s block, the English one is %s" % (where, zh_kind, en_kind))
        try:
            en_commands, zh_commands = commands(en_lines), commands(zh_lines)
        except ValueError as e:
            problems.append("%s: %s" % (where, e))
            continue
        if len(en_commands) != len(zh_commands):
            problems.append("%s: %d commands, the English block has %d" % (where, len(zh_commands), len(en_commands)))
        for en, zh in zip(en_commands, zh_commands):
            problem = compare_command(en, zh)
            if problem:
                problems.append("zh/%s: %s" % (rel, problem))
    return problems


def check(labs):
    """Every problem of docs/labs (English) against docs/labs/zh, and the number of pages paired."""
    zh_labs = os.path.join(labs, "zh")
    english, chinese = pages(labs), pages(zh_labs)
    problems = ["%s has no Chinese twin zh/%s" % (rel, rel) for rel in english if rel not in chinese]
    problems += ["zh/%s has no English original %s" % (rel, rel) for rel in chinese if rel not in english]
    paired = [rel for rel in english if rel in chinese]
    for rel in paired:
        problems += compare_outline(os.path.join(labs, rel), os.path.join(zh_labs, rel), rel)
        problems += compare_page(os.path.join(labs, rel), os.path.join(zh_labs, rel), rel)
    return problems, len(paired)


EN_LAB = """# Lab 01
Answers: [answers/01-x.md](answers/01-x.md).

## Run

```sh runnable
build/default/scenarios/counter_demo --lock no-lock
build/default/harness/locklab run --lock no-lock --clients 4   # four clients
```
<!-- expect: no lock -->

```lua
return 0
```

## More

```sh
build/default/scenarios/counter_demo --serve 8080 \\
    --instances 3
```
"""
ZH_LAB = """# 实验 01
答案：[answers/01-x.md](answers/01-x.md)。

## 运行

```sh runnable
build/default/scenarios/counter_demo --lock no-lock --lang zh
build/default/harness/locklab run --lock no-lock --clients 4   # 四个客户端
```

正文里的 ```` ```sh ```` 不是代码块。

## 更多

```sh
build/default/scenarios/counter_demo --serve 8080 --instances 3 --lang zh
```
"""
# Each planted drift: (what, the zh lab's text, or None for no zh lab; extra zh page?), and the words its report must have.
DRIFTS = [
    ("a flag differs", ZH_LAB.replace("--clients 4", "--clients 5"), False, "differs from English line"),
    ("--lang zh missing", ZH_LAB.replace("--lock no-lock --lang zh", "--lock no-lock"), False, "has no --lang zh"),
    ("--lang on locklab", ZH_LAB.replace("--clients 4", "--clients 4 --lang zh"), False, "only scenario commands take --lang"),
    ("commands reordered", ZH_LAB.replace(
        "build/default/scenarios/counter_demo --lock no-lock --lang zh\nbuild/default/harness/locklab run --lock no-lock --clients 4",
        "build/default/harness/locklab run --lock no-lock --clients 4\nbuild/default/scenarios/counter_demo --lock no-lock --lang zh"),
     False, "differs from English line"),
    ("a command missing", ZH_LAB.replace("build/default/harness/locklab run --lock no-lock --clients 4   # 四个客户端\n", ""),
     False, "1 commands, the English block has 2"),
    ("a block's kind differs", ZH_LAB.replace("```sh runnable", "```sh"), False, "a shown block, the English one is runnable"),
    ("a section missing", ZH_LAB.replace("## 更多\n", ""), False, "2 headings, the English page has 3"),
    ("a heading's level differs", ZH_LAB.replace("## 更多", "### 更多"), False, "a level-3 heading, the English one is level 2"),
    ("a block in another section", ZH_LAB.replace("## 运行\n", "").replace("答案：", "## 运行\n\n## 先看\n答案："), False,
     "0 sh blocks in this section, the English one has 1"),
    ("a zh page missing", None, False, "has no Chinese twin"),
    ("a zh page without English", ZH_LAB, True, "has no English original"),
]


def plant(root, zh_lab, orphan):
    labs = os.path.join(root, "docs", "labs")
    for folder in ("answers", os.path.join("zh", "answers")):
        os.makedirs(os.path.join(labs, folder))
    files = {"01-x.md": EN_LAB, "answers/01-x.md": "# answers\n", "zh/answers/01-x.md": "# 答案\n"}
    if zh_lab is not None:
        files["zh/01-x.md"] = zh_lab
    if orphan:
        files["zh/02-y.md"] = ZH_LAB
    for rel, text in files.items():
        with open(os.path.join(labs, rel), "w", encoding="utf-8") as f:
            f.write(text)
    return labs


def self_test():
    """The twins planted in a temp folder pass; each planted drift is caught."""
    ok = True
    with tempfile.TemporaryDirectory() as root:
        problems, paired = check(plant(os.path.join(root, "good"), ZH_LAB, False))
        for line in problems:
            print("self-test: good twins: unexpected: " + line)
        if problems or paired != 2:
            print("self-test: the good twins did not pass (%d pages paired)" % paired)
            ok = False
        for n, (what, zh_lab, orphan, words) in enumerate(DRIFTS):
            problems, _ = check(plant(os.path.join(root, "drift%d" % n), zh_lab, orphan))
            caught = [line for line in problems if words in line]
            print("self-test: %s: %s" % (what, caught[0] if caught else "NOT CAUGHT (%s)" % problems))
            ok = ok and bool(caught)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--self-test", action="store_true", help="show that a zh page out of step is caught")
    args = parser.parse_args()
    if args.self_test:
        if self_test():
            print("docs zh: the self-test catches every planted drift (%d)" % len(DRIFTS))
            return 0
        print("docs zh: the self-test missed a planted drift", file=sys.stderr)
        return 1
    problems, paired = check(os.path.join(args.source, "docs", "labs"))
    for line in problems:
        print("docs zh: " + line, file=sys.stderr)
    if problems:
        return 1
    print("docs zh: %d Chinese pages have their English pages' outline and commands" % paired)
    return 0


if __name__ == "__main__":
    sys.exit(main())
