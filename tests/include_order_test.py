#!/usr/bin/env python3
"""The include order: every C/C++ file's include block is as scripts/sort-includes (clang-format's
include sorting, .clang-format's groups) leaves it.

  include_order_test.py --source DIR              fails, naming each unsorted file, if any block is unsorted
  include_order_test.py --source DIR --self-test  plants an unsorted file, a sorted one and one whose block
                                                  clang-format would reformat, and checks the verdict on each

Exit 77 (ctest's skip) when clang-format is not installed: scripts/setup installs it.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

UNSORTED = '#include "sweeps/matrix.h"\n#include <vector>\n#include "history/checker.h"\n\nint x;\n'
SORTED = '#include <vector>\n\n#include "history/checker.h"\n#include "sweeps/matrix.h"\n\nint x;\n'
REFORMATTED = '#include <vector>\n#include "a.h"      //   spaced comment\n\nint x;\n'


def sort_includes(source, *args):
    return subprocess.run([sys.executable, "-B", os.path.join(source, "scripts", "sort-includes"), *args],
                          capture_output=True, text=True)


def self_test(source):
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = {"unsorted.cpp": (UNSORTED, 1, "unsorted.cpp"), "sorted.cpp": (SORTED, 0, ""),
                 "reformatted.cpp": (REFORMATTED, 1, "changed a line of the include block")}
        for name, (text, want_rc, want_text) in cases.items():
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            run = sort_includes(source, "--check", path)
            said = run.stdout + run.stderr
            if run.returncode != want_rc or want_text not in said:
                failures.append(f"{name}: exit {run.returncode} (want {want_rc}), said {said.strip()!r}")
        fixed = os.path.join(tmp, "unsorted.cpp")
        run = sort_includes(source, fixed)
        with open(fixed) as f:
            if run.returncode != 0 or f.read() != SORTED:
                failures.append(f"sorting unsorted.cpp did not give the sorted text (exit {run.returncode})")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if shutil.which("clang-format") is None:
        print("include_order: clang-format is not installed (scripts/setup installs it): skipped")
        return 77
    if args.self_test:
        failures = self_test(args.source)
    else:
        run = sort_includes(args.source, "--check")
        failures = [f"{line}: include block not sorted (run scripts/sort-includes)" for line in run.stdout.splitlines()]
        failures += [line for line in run.stderr.splitlines()]
        if run.returncode != 0 and not failures:
            failures.append(f"scripts/sort-includes --check exited {run.returncode}")
    for line in failures:
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
