#!/usr/bin/python3
"""compare-peers' table: one Markdown row per lock, from the rows a run left.

Usage: table.py ROWS_DIR > table.md   (also writes ROWS_DIR/summary.json)

ROWS_DIR holds one directory per row, in name order, each with meta.json
({"name", "kind": "peer"|"locklab", "nodes", "duration_s", "counter_final"})
and either workers.jsonl (one JSON line per peer worker) or locklab.json (a
`locklab run` document). Every figure is computed the same way for both:
  acq/s      acquisitions / duration
  p99, max   of the wait: from wanting the lock (across abandoned attempts) to holding it
  Jain       (sum x)^2 / (n sum x^2) over the clients' acquisition counts (1 = equal shares)
  abandoned  acquire calls that gave up at the wait bound (1 s)
  counter    exact when the counter equals the acquisitions (no lost update)
  vs best    acq/s over the best peer's acq/s
"""
import json
import math
import os
import sys


def jain(counts):
    total = sum(counts)
    squares = sum(c * c for c in counts)
    return total * total / (len(counts) * squares) if squares else 0.0


def percentile(sorted_values, q):
    if not sorted_values:
        return 0
    rank = max(0, math.ceil(q * len(sorted_values)) - 1)
    return sorted_values[rank]


def peer_row(meta, path):
    workers = [json.loads(line) for line in open(path) if line.strip()]
    waits = sorted(w for worker in workers for w in worker["waits_us"])
    acquired = sum(w["acquired"] for w in workers)
    return {
        "acquired": acquired,
        "acq_per_s": acquired / meta["duration_s"],
        "p99_wait_us": percentile(waits, 0.99),
        "max_wait_us": waits[-1] if waits else 0,
        "jain": jain([w["acquired"] for w in workers]),
        "abandoned": sum(w["abandoned"] for w in workers),
        "errors": sum(w["errors"] for w in workers),
        "per_client": [w["acquired"] for w in workers],
        "workers": len(workers),
    }


def locklab_row(meta, path):
    doc = json.load(open(path))
    return {
        "acquired": doc["totals"]["acquired"],
        "acq_per_s": doc["throughput"]["acquisitions_per_s"],
        "p99_wait_us": doc["latency"]["wait_us"]["p99"],
        "max_wait_us": doc["fairness"]["max_wait_us"],
        "jain": doc["fairness"]["jain"],
        "abandoned": doc["totals"]["timeouts"],
        "errors": doc["totals"]["errors"] + doc["totals"]["unknown"],
        "per_client": doc["fairness"]["per_client_acquired"],
        "workers": doc["config"]["clients"],
        "verdict": doc["verdict"],
    }


def ms(us):
    return f"{us / 1000:.1f} ms" if us < 1_000_000 else f"{us / 1e6:.2f} s"


def main():
    if len(sys.argv) != 2:
        print("usage: table.py ROWS_DIR", file=sys.stderr)
        return 2
    rows_dir = sys.argv[1]
    rows = []
    for name in sorted(os.listdir(rows_dir)):
        directory = os.path.join(rows_dir, name)
        if not os.path.isdir(directory):
            continue
        meta = json.load(open(os.path.join(directory, "meta.json")))
        if meta["kind"] == "peer":
            row = peer_row(meta, os.path.join(directory, "workers.jsonl"))
        else:
            row = locklab_row(meta, os.path.join(directory, "locklab.json"))
        row.update(meta)
        row["counter_exact"] = meta["counter_final"] == row["acquired"]
        rows.append(row)

    best_peer = max((r["acq_per_s"] for r in rows if r["kind"] == "peer"), default=0)
    print("| lock | nodes | acq/s | p99 wait | max wait | Jain | abandoned | counter | vs best peer |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in rows:
        counter = "exact" if r["counter_exact"] else f"{r['counter_final']} of {r['acquired']}"
        ratio = f"{r['acq_per_s'] / best_peer:.2f}×" if best_peer else "–"
        print(f"| {r['name']} | {r['nodes']} | {r['acq_per_s']:.0f} | {ms(r['p99_wait_us'])} | "
              f"{ms(r['max_wait_us'])} | {r['jain']:.2f} | {r['abandoned']} | {counter} | {ratio} |")
    with open(os.path.join(rows_dir, "summary.json"), "w") as out:
        json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
