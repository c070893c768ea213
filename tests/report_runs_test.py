#!/usr/bin/env python3
"""`locklab report` over runs made differently (issue 28, item 3), on real runs.

Two runs with real Redis: setnx with holder-crash (the holder dies inside; the
key has no expiry: a stall of seconds after a few ms of sections) and
lua-safe-delete with holder-pause:until=expired (SIGSTOP, then SIGCONT once the
key expired). Then `locklab report` over both, and checks that:

  - report.md gives each run its own header: its lock, its fault, its clients,
    its ttl and the command that made it (each run's own config.command);
  - report.md lists each fault act and each stall at the times the run
    documents record;
  - report.html's timeline of each run has a tick per fault act (its <title>)
    and, for the stall, an amber band, and its axis spans every act and stall
    (the end label is at least the stall's end): a stall is visible whatever
    its length.

    report_runs_test.py LOCKLAB WORKDIR
Exit 0 when all hold, 1 with one line per failure.
"""
import json
import os
import re
import shutil
import subprocess
import sys

RUNS = {
    "crash": ["--lock", "setnx", "--clients", "2", "--ops", "6", "--ttl", "1000", "--hold", "5", "--wait", "1000",
              "--stall", "250", "--fault", "holder-crash"],
    "pause": ["--lock", "lua-safe-delete", "--clients", "3", "--ops", "9", "--ttl", "200", "--hold", "20",
              "--wait", "1000", "--fault", "holder-pause:until=expired"],
}


def run(locklab, work, name, args):
    path = os.path.join(work, name + ".json")
    done = subprocess.run([locklab, "run", *args, "--json", path], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        sys.exit("FAIL locklab run %s exited %d: %s" % (name, done.returncode, done.stderr.strip()[-300:]))
    with open(path, encoding="utf-8") as f:
        return path, json.load(f)


def timelines(html):
    """{lock: (the <svg>…</svg> of its timeline)} in the order of the page."""
    found = {}
    for match in re.finditer(r'<h3>([^ <]+) — .*?</h3>\n<p class="run">.*?</p>\n(?:<p class="note">.*?</p>\n)?(<svg.*?</svg>)',
                             html, re.S):
        found[match.group(1)] = match.group(2)
    return found


def check(md, html, docs):
    problems = []
    svgs = timelines(html)
    for doc in docs:
        lock, config = doc["lock"], doc["config"]
        header = "%s: fault %s; %d process clients" % (lock, config["faults"][0], config["clients"])
        line = next((l for l in md.splitlines() if l.startswith("- run ") and header in l), None)
        if line is None:
            problems.append("report.md: no header '%s'" % header)
            continue
        for part in ("ttl %d ms" % config["ttl_ms"], "Made by: `%s`" % config["command"]):
            if part not in line:
                problems.append("report.md: %s's header lacks '%s'" % (lock, part))
        svg = svgs.get(lock, "")
        if not svg:
            problems.append("report.html: no timeline for %s" % lock)
            continue
        end = float(re.findall(r'>([0-9.]+) ms</text></svg>$', svg)[0])
        for fault in doc["faults"]:
            for act in fault["applied"]:
                listed = "%s at %.1f ms: %s" % (fault["spec"], act["t_ms"], act["what"])
                if listed not in md:
                    problems.append("report.md: act not listed: %s" % listed)
                if "ms: %s</title>" % act["what"].replace("&", "&amp;") not in svg:
                    problems.append("report.html: %s's timeline has no tick for '%s'" % (lock, act["what"]))
                if end < act["t_ms"]:
                    problems.append("report.html: %s's axis ends at %.1f ms, before the act at %.1f" % (lock, end, act["t_ms"]))
        for stall in doc["safety"]["stall_spans"]:
            if "stall %d–%d ms" % (stall["from_ms"], stall["to_ms"]) not in svg:
                problems.append("report.html: %s's timeline has no stall band %s" % (lock, stall))
            if end < stall["to_ms"]:
                problems.append("report.html: %s's axis ends at %.1f ms, before the stall's end %d" % (lock, end, stall["to_ms"]))
    if not any(doc["safety"]["stall_spans"] for doc in docs):
        problems.append("the setnx run recorded no stall: nothing to see on the timeline (the run, not the report)")
    return problems


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: report_runs_test.py LOCKLAB WORKDIR")
    locklab, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    made = [run(locklab, work, name, args) for name, args in RUNS.items()]
    out = os.path.join(work, "report")
    done = subprocess.run([locklab, "report", *[p for p, _ in made], "--out", out], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("FAIL locklab report exited %d: %s" % (done.returncode, done.stderr.strip()))
    with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
        md = f.read()
    with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
        html = f.read()
    problems = check(md, html, [d for _, d in made])
    for problem in problems:
        print("FAIL " + problem)
    if problems:
        return 1
    print("PASS: each run its own header; %d fault acts and the stalls on the timelines" %
          sum(len(f["applied"]) for _, d in made for f in d["faults"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
