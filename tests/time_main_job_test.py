#!/usr/bin/env python3
"""scripts/time-main-job keeps the documents of the cells off their class.

The scratch runs are thrown away once timed; a cell that differed, went
unbitten or varied across the runs keeps each run's document under
DEST/run-<i>/, and DEST is emptied first (a regeneration leaves no stale
copies). Exit 0 when all hold, 1 with one line per failure.

    time_main_job_test.py SOURCE_DIR
"""
import importlib.machinery
import importlib.util
import json
import os
import sys
import tempfile


def load(source):
    loader = importlib.machinery.SourceFileLoader("time_main_job", os.path.join(source, "scripts", "time-main-job"))
    spec = importlib.util.spec_from_loader("time_main_job", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def cell(run_dir, lock, fault, observed):
    os.makedirs(os.path.join(run_dir, "cells"), exist_ok=True)
    with open(os.path.join(run_dir, "cells", "%s__%s.json" % (lock, fault)), "w", encoding="utf-8") as f:
        json.dump({"lock": lock, "fault": fault, "observed": observed}, f)


def main():
    tmj = load(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        runs = [os.path.join(scratch, "r%d" % i) for i in range(3)]
        for i, run_dir in enumerate(runs):
            cell(run_dir, "ext:redlock-rs", "node-restart", "liveness" if i == 2 else "liveness, exposed")
            cell(run_dir, "setnx", "holder-crash", "deadlock")
            cell(run_dir, "fenced", "failover", "me-violation")
        records = [{"cells_differing": [], "cells_not_bitten": []},
                   {"cells_differing": [], "cells_not_bitten": ["fenced x failover"]},
                   {"cells_differing": ["ext:redlock-rs x node-restart: liveness, expected liveness, exposed"],
                    "cells_not_bitten": []}]
        readings = [{"ext:redlock-rs x node-restart": "liveness, exposed", "setnx x holder-crash": "deadlock"},
                    {"ext:redlock-rs x node-restart": "liveness, exposed", "setnx x holder-crash": "deadlock"},
                    {"ext:redlock-rs x node-restart": "liveness", "setnx x holder-crash": "deadlock"}]
        if tmj.cells_varying(readings + [{}]) != tmj.cells_varying(readings):
            failures.append("cells_varying: a run that read nothing made cells vary")
        names = tmj.off_cells(records, readings)
        if names != ["ext:redlock-rs x node-restart", "fenced x failover"]:
            failures.append("off_cells: %s" % names)
        dest = os.path.join(scratch, "kept")
        os.makedirs(os.path.join(dest, "run-9"))  # a stale copy of an earlier regeneration
        kept = tmj.keep_cells(runs + [os.path.join(scratch, "gone"), None], names, dest)  # a run that left nothing
        want = sorted("run-%d/%s" % (i + 1, f) for i in range(3)
                      for f in ("ext:redlock-rs__node-restart.json", "fenced__failover.json"))
        got = sorted(os.path.relpath(os.path.join(d, f), dest) for d, _, files in os.walk(dest) for f in files)
        if kept != 6 or got != want:
            failures.append("keep_cells: kept %d, %s" % (kept, got))
        if os.path.exists(os.path.join(dest, "run-9")):
            failures.append("keep_cells: DEST not emptied first")
        with open(os.path.join(dest, "run-3", "ext:redlock-rs__node-restart.json"), encoding="utf-8") as f:
            if json.load(f)["observed"] != "liveness":
                failures.append("keep_cells: run 3's copy is not run 3's document")
    for failure in failures:
        print("time_main_job_test: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
