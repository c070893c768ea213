#!/usr/bin/python3
"""compare-peers' tables: uncontended cycles, then the contended workload.

Usage: table.py ROWS_DIR > tables.md   (also writes ROWS_DIR/summary.json)

ROWS_DIR holds what one run left:
  lock_bench.json   Google Benchmark JSON from build/default/bench/lock_bench:
                    the floors (BM_Cycle/floor/nodes:1, BM_Cycle/fanout-floor/nodes:N)
                    and locklab's uncontended cycles (BM_Cycle/<generation>/nodes:N)
  NN/meta.json      one directory per peer or locklab row, in name order:
                    {"name", "kind": "peer"|"locklab", "workload": "uncontended"|"contended",
                     "nodes", "duration_s"; contended rows also "hold_ms", "counter_final"}
  NN/workers.jsonl  a peer row: one JSON line per worker (uncontended: one worker, --cycles)
  NN/locklab.json   a contended locklab or adapter row: a `locklab run` document
                    (an adapter row's meta also has "adapter": "ext:NAME" and "native":
                    the name of the native peer it is compared with, or null)
  A contended peer row whose meta has "beside": "ext:NAME" is a native run for that
  adapter's comparison only: compare-peers alternates native and adapter runs,
  several of each, so that a change of load hits both alike.

Uncontended (one client, no counter, no hold):
  cycles/s      acquire + release cycles per second (lock_bench: 1 / the median over
                repetitions of the real time per cycle; a peer: cycles / duration)
  p50, p99      per-cycle latency (peers measure each cycle; lock_bench gives a mean only)
  % of floor    cycles/s over the floor's with the same node count: the raw hiredis
                2-round-trip cycle on one node, the raw poll-based fan-out on N
  vs best peer  cycles/s over the best peer's with the same node count
Contended (N clients, one key, GET / hold / SET inside the lock):
  acq/s              acquisitions / duration
  % of serial limit  acq/s over 1 / (hold + 4 RTT), RTT = half the floor's cycle (same run)
  p99, max           of the wait: from wanting the lock (across abandoned attempts) to holding it
  Jain               (sum x)^2 / (n sum x^2) over the clients' acquisition counts (1 = equal shares)
  abandoned          acquire calls that gave up at the wait bound
  counter            exact when the counter equals the acquisitions (no lost update)
  vs best peer       acq/s over the best peer's acq/s
Through the adapter (the contended workload, `locklab run --lock ext:NAME`; several
runs of one adapter make one row, each figure the median over its runs):
  acq/s              the median, then every run's
  native acq/s       the median and every run of the native runs beside it ("beside")
  adapter / native   median over median
  % of serial limit, Jain, abandoned (summed), counter (exact in every run)   as above
  no-op p50, p99     the adapter's no-op round trip (each run's probe, 300 no-ops; subtracted nowhere)
  (target line)      each no-op p50 also as a multiple of the no-op floor's p50: lock_bench's
                     BM_Adapter/echo-floor, `cat` answering the same line over the same kind of
                     socket pair, measured with the uncontended floors of the same run

Bad or missing input: a one-line error on stderr, exit 1 (usage: exit 2).
"""
import json
import math
import os
import statistics
import sys

PEER_TARGET_RATIO = 1.3  # issue 11's targets: this × the best peer, and floor_target_percent() of the floor
ADAPTER_TARGET_RATIO = 0.9  # issue 18: through the adapter within 10 % of the native run
NOOP_TARGET_US = 50  # issue 18: each adapter's no-op round trip below 50 µs at the median
TIME_UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


class InputError(Exception):
    """Input the tables cannot be made from; its message is the one-line error."""


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from None
    except ValueError as e:
        raise InputError(f"{path}: not JSON ({e})") from None


def load_json_lines(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from None
    except ValueError as e:
        raise InputError(f"{path}: a line is not JSON ({e})") from None


def field(document, path, *keys):
    """document[k1][k2]...; a missing key is an InputError naming the file and the field."""
    value = document
    for key in keys:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            raise InputError(f"{path}: no field {'.'.join(map(str, keys))}") from None
    return value


def jain(counts):
    total = sum(counts)
    squares = sum(c * c for c in counts)
    return total * total / (len(counts) * squares) if squares else 0.0


def percentile(sorted_values, q):
    if not sorted_values:
        return 0
    rank = max(0, math.ceil(q * len(sorted_values)) - 1)
    return sorted_values[rank]


# ---- lock_bench: floors and locklab's uncontended cycles ---------------------------

def bench_cycles(path):
    """{(what, nodes): median µs per cycle} from lock_bench's BM_Cycle/<what>/nodes:N runs."""
    document = load_json(path)
    samples = {}
    for run in field(document, path, "benchmarks"):
        if run.get("run_type", "iteration") != "iteration":
            continue  # aggregates: the median is taken here, over the repetitions
        name = field(run, path, "run_name") if "run_name" in run else field(run, path, "name")
        parts = name.split("/")
        if len(parts) != 3 or parts[0] != "BM_Cycle" or not parts[2].startswith("nodes:"):
            continue
        if run.get("error_occurred"):
            raise InputError(f"{path}: {name} failed: {run.get('error_message', 'no message')}")
        unit = TIME_UNIT_US.get(run.get("time_unit", "ns"))
        if unit is None:
            raise InputError(f"{path}: {name}: unknown time_unit {run.get('time_unit')}")
        samples.setdefault((parts[1], int(parts[2][len("nodes:"):])), []).append(
            float(field(run, path, "real_time")) * unit)
    return {key: statistics.median(values) for key, values in samples.items()}


def bench_echo_floor(path):
    """{"p50": µs, "p99": µs}: the medians over the repetitions of BM_Adapter/echo-floor; None if not run."""
    document = load_json(path)
    samples = {"p50": [], "p99": []}
    for run in field(document, path, "benchmarks"):
        name = run.get("run_name", run.get("name"))
        if name != "BM_Adapter/echo-floor" or run.get("run_type", "iteration") != "iteration":
            continue
        if run.get("error_occurred"):
            raise InputError(f"{path}: {name} failed: {run.get('error_message', 'no message')}")
        for q in samples:
            samples[q].append(float(field(run, path, f"{q}_us")))
    return {q: statistics.median(v) for q, v in samples.items()} if samples["p50"] else None


def floor_key(nodes):
    return ("floor", 1) if nodes == 1 else ("fanout-floor", nodes)


def floor_target_percent(nodes):
    return 95 if nodes == 1 else 90  # issue 11: 95 % of the floor on one node, 90 % of the fan-out floor


def floor_name(nodes):
    if nodes == 1:
        return "raw hiredis floor: `SET NX PX` + `DEL`, blocking (2 round trips)"
    return f"raw fan-out floor: the same to {nodes} nodes at once, fds polled (2 round trips)"


# ---- rows ----------------------------------------------------------------------------

def uncontended_peer_row(meta, path):
    workers = load_json_lines(path)
    if len(workers) != 1:
        raise InputError(f"{path}: an uncontended row has one worker, found {len(workers)}")
    worker = workers[0]
    cycles = field(worker, path, "cycles")
    return {
        "cycles": cycles,
        "cycles_per_s": cycles / meta["duration_s"],
        "us_per_cycle": meta["duration_s"] * 1e6 / cycles if cycles else None,
        "p50_us": field(worker, path, "cycle_p50_us"),
        "p99_us": field(worker, path, "cycle_p99_us"),
        "failed": worker.get("abandoned", 0) + worker.get("errors", 0) + worker.get("release_failures", 0),
    }


def contended_peer_row(meta, path):
    workers = load_json_lines(path)
    if not workers:
        raise InputError(f"{path}: no worker wrote a line")
    waits = sorted(w for worker in workers for w in field(worker, path, "waits_us"))
    acquired = sum(field(w, path, "acquired") for w in workers)
    return {
        "acquired": acquired,
        "acq_per_s": acquired / meta["duration_s"],
        "p99_wait_us": percentile(waits, 0.99),
        "max_wait_us": waits[-1] if waits else 0,
        "jain": jain([w["acquired"] for w in workers]),
        "abandoned": sum(field(w, path, "abandoned") for w in workers),
        "errors": sum(field(w, path, "errors") for w in workers),
        "per_client": [w["acquired"] for w in workers],
        "workers": len(workers),
    }


def contended_locklab_row(meta, path):
    doc = load_json(path)
    return {
        "acquired": field(doc, path, "totals", "acquired"),
        "acq_per_s": field(doc, path, "throughput", "acquisitions_per_s"),
        "p99_wait_us": field(doc, path, "latency", "wait_us", "p99"),
        "max_wait_us": field(doc, path, "fairness", "max_wait_us"),
        "jain": field(doc, path, "fairness", "jain"),
        "abandoned": field(doc, path, "totals", "timeouts"),
        "errors": field(doc, path, "totals", "errors") + field(doc, path, "totals", "unknown"),
        "per_client": field(doc, path, "fairness", "per_client_acquired"),
        "workers": field(doc, path, "config", "clients"),
        "verdict": field(doc, path, "verdict"),
    }


def adapter_row(meta, meta_path, path):
    """A contended row through an adapter: the locklab row, the adapter's identity and no-op round trip."""
    adapter = field(meta, meta_path, "adapter")
    field(meta, meta_path, "native")
    row = contended_locklab_row(meta, path)
    probe = field(load_json(path), path, "adapters", adapter)
    row.update(library=probe.get("library", adapter), version=probe.get("version", ""),
               noop_p50_us=field(probe, path, "noop_us", "p50"), noop_p99_us=field(probe, path, "noop_us", "p99"))
    return row


def read_row_dirs(rows_dir):
    """(uncontended peer rows, contended rows, native rows beside an adapter, adapter rows), each in
    directory-name order."""
    uncontended, contended, natives, adapters = [], [], [], []
    for name in sorted(os.listdir(rows_dir)):
        directory = os.path.join(rows_dir, name)
        if not os.path.isdir(directory):
            continue
        meta_path = os.path.join(directory, "meta.json")
        meta = load_json(meta_path)
        for key in ("name", "kind", "workload", "nodes", "duration_s"):
            field(meta, meta_path, key)
        if not meta["duration_s"] > 0:
            raise InputError(f"{meta_path}: duration_s must be positive, got {meta['duration_s']}")
        kind, workload = meta["kind"], meta["workload"]
        if workload == "uncontended" and kind == "peer":
            row = uncontended_peer_row(meta, os.path.join(directory, "workers.jsonl"))
            uncontended.append({**meta, **row})
        elif workload == "contended" and kind in ("peer", "locklab", "adapter"):
            field(meta, meta_path, "counter_final")
            field(meta, meta_path, "hold_ms")
            if kind == "peer":
                row = contended_peer_row(meta, os.path.join(directory, "workers.jsonl"))
            elif kind == "locklab":
                row = contended_locklab_row(meta, os.path.join(directory, "locklab.json"))
            else:
                row = adapter_row(meta, meta_path, os.path.join(directory, "locklab.json"))
            row = {**meta, **row}
            row["counter_exact"] = meta["counter_final"] == row["acquired"]
            (adapters if kind == "adapter" else natives if meta.get("beside") else contended).append(row)
        else:
            raise InputError(f"{meta_path}: unknown row kind {kind!r} / workload {workload!r}")
    return uncontended, contended, natives, adapters


# ---- uncontended ---------------------------------------------------------------------

def uncontended_rows(cycles, peers):
    """Every uncontended row, grouped by node count: floor, peers, locklab; ratios filled in."""
    bench_rows = []
    for (what, nodes), us in cycles.items():
        if (what, nodes) == floor_key(nodes):
            bench_rows.append({"name": floor_name(nodes), "kind": "floor", "nodes": nodes})
        elif what not in ("floor", "fanout-floor"):
            bench_rows.append({"name": f"locklab `{what}`", "kind": "locklab", "nodes": nodes})
        else:
            continue  # a floor no lock row here is compared with
        bench_rows[-1].update(bench=f"BM_Cycle/{what}/nodes:{nodes}", us_per_cycle=us, cycles_per_s=1e6 / us,
                              p50_us=None, p99_us=None, failed=0)
    rows = []
    for nodes in sorted({r["nodes"] for r in bench_rows + peers}):
        group = [r for r in bench_rows if r["nodes"] == nodes and r["kind"] == "floor"]
        group += [r for r in peers if r["nodes"] == nodes]
        group += [r for r in bench_rows if r["nodes"] == nodes and r["kind"] == "locklab"]
        floor = cycles.get(floor_key(nodes))
        best_peer = max((r["cycles_per_s"] for r in group if r["kind"] == "peer"), default=0)
        for r in group:
            r["percent_of_floor"] = 100 * r["cycles_per_s"] * floor / 1e6 if floor else None
            r["vs_best_peer"] = r["cycles_per_s"] / best_peer if best_peer else None
        rows += group
    return rows


def target_lines(rows):
    """One line per node count with a locklab row: issue 11's uncontended targets, met or missed."""
    lines, targets = [], []
    for nodes in sorted({r["nodes"] for r in rows if r["kind"] == "locklab"}):
        floor_target = floor_target_percent(nodes)
        floor = "the floor" if nodes == 1 else "the fan-out floor"
        peers = [r for r in rows if r["nodes"] == nodes and r["kind"] == "peer"]
        best = max(peers, key=lambda r: r["cycles_per_s"])["name"] if peers else None
        parts = []
        for r in rows:
            if r["nodes"] != nodes or r["kind"] != "locklab":
                continue
            floor_met = r["percent_of_floor"] is not None and r["percent_of_floor"] >= floor_target
            peer_met = r["vs_best_peer"] is not None and r["vs_best_peer"] >= PEER_TARGET_RATIO
            percent = f"{r['percent_of_floor']:.0f} %" if r["percent_of_floor"] is not None else "–"
            ratio = f"{r['vs_best_peer']:.2f}×" if r["vs_best_peer"] is not None else "–"
            parts.append(f"{r['name']} {percent} ({'met' if floor_met else 'missed'}), "
                         f"{ratio} ({'met' if peer_met else 'missed'})")
            targets.append({"lock": r["name"], "nodes": nodes, "floor_target_percent": floor_target,
                            "percent_of_floor": r["percent_of_floor"], "floor_met": floor_met,
                            "peer_target_ratio": PEER_TARGET_RATIO, "vs_best_peer": r["vs_best_peer"],
                            "best_peer": best, "peer_met": peer_met})
        lines.append(f"- Target, {nodes} node{'s' if nodes > 1 else ''}: at least {floor_target} % of {floor} and "
                     f"{PEER_TARGET_RATIO}× the best peer ({best or 'none measured'}): " + "; ".join(parts) + ".")
    return lines, targets


def us(value):
    return "–" if value is None else f"{value:.0f} µs" if value >= 100 else f"{value:.1f} µs"


def print_uncontended(rows):
    print("| lock | nodes | cycles/s | µs per cycle | p50 | p99 | % of floor | vs best peer |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        cycles = f"{r['cycles_per_s']:.0f}" + (f" ({r['failed']} failed)" if r["failed"] else "")
        percent = f"{r['percent_of_floor']:.0f} %" if r["percent_of_floor"] is not None else "–"
        ratio = f"{r['vs_best_peer']:.2f}×" if r["vs_best_peer"] is not None else "–"
        print(f"| {r['name']} | {r['nodes']} | {cycles} | {us(r['us_per_cycle'])} | {us(r['p50_us'])} | "
              f"{us(r['p99_us'])} | {percent} | {ratio} |")


# ---- contended -----------------------------------------------------------------------

def serial_limit(cycles, contended, bench_path):
    """1 / (hold + 4 RTT), the RTT being half the raw floor's 2-round-trip cycle of this run."""
    if ("floor", 1) not in cycles:
        raise InputError(f"{bench_path}: no BM_Cycle/floor/nodes:1 (the serial limit needs the floor's round trip)")
    holds = {r["hold_ms"] for r in contended}  # every contended row: native, locklab, adapter
    if len(holds) > 1:
        raise InputError(f"contended rows disagree on hold_ms: {sorted(holds)}")
    hold_ms = holds.pop() if holds else 0
    round_trip_us = cycles[("floor", 1)] / 2
    return {"hold_ms": hold_ms, "round_trip_us": round_trip_us,
            "acq_per_s": 1e6 / (hold_ms * 1000 + 4 * round_trip_us),
            "round_trip_from": "BM_Cycle/floor/nodes:1 real time / 2"}


def ms(value_us):
    return f"{value_us / 1000:.1f} ms" if value_us < 1_000_000 else f"{value_us / 1e6:.2f} s"


def print_contended(rows, limit):
    best_peer = max((r["acq_per_s"] for r in rows if r["kind"] == "peer"), default=0)
    print("| lock | nodes | acq/s | % of serial limit | p99 wait | max wait | Jain | abandoned | counter | vs best peer |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in rows:
        r["percent_of_serial_limit"] = 100 * r["acq_per_s"] / limit["acq_per_s"]
        r["vs_best_peer"] = r["acq_per_s"] / best_peer if best_peer else None
        counter = "exact" if r["counter_exact"] else f"{r['counter_final']} of {r['acquired']}"
        ratio = f"{r['vs_best_peer']:.2f}×" if r["vs_best_peer"] is not None else "–"
        print(f"| {r['name']} | {r['nodes']} | {r['acq_per_s']:.0f} | {r['percent_of_serial_limit']:.0f} % | "
              f"{ms(r['p99_wait_us'])} | {ms(r['max_wait_us'])} | {r['jain']:.2f} | {r['abandoned']} | {counter} | "
              f"{ratio} |")


# ---- through the adapter --------------------------------------------------------------

def adapter_rows(runs, natives, limit):
    """One row per adapter (in order of its first run): the medians over its runs, and over the native runs
    beside it when it names a native peer."""
    rows = []
    for adapter in dict.fromkeys(r["adapter"] for r in runs):
        mine = [r for r in runs if r["adapter"] == adapter]
        first = mine[0]
        beside = [n for n in natives if n["beside"] == adapter]
        if first["native"] and not beside:
            raise InputError(f"{adapter}: no native run of {first['native']!r} beside it to compare with")
        acq = statistics.median(r["acq_per_s"] for r in mine)
        native = statistics.median(n["acq_per_s"] for n in beside) if beside else None
        rows.append({
            "adapter": adapter, "library": first["library"], "version": first["version"], "nodes": first["nodes"],
            "native": first["native"], "runs": [r["acq_per_s"] for r in mine], "acq_per_s": acq,
            "native_runs": [n["acq_per_s"] for n in beside], "native_acq_per_s": native,
            "vs_native": acq / native if native else None,
            "percent_of_serial_limit": 100 * acq / limit["acq_per_s"],
            "noop_p50_us": statistics.median(r["noop_p50_us"] for r in mine),
            "noop_p99_us": statistics.median(r["noop_p99_us"] for r in mine),
            "jain": statistics.median(r["jain"] for r in mine),
            "abandoned": sum(r["abandoned"] for r in mine),
            "counter_exact": all(r["counter_exact"] for r in mine),
            "lost": [f"{r['counter_final']} of {r['acquired']}" for r in mine if not r["counter_exact"]],
            "verdicts": sorted({r["verdict"] for r in mine}),
        })
    return rows


def times_floor(value, floor):
    return f", {value / floor['p50']:.1f}× the floor" if floor else ""


def adapter_target_lines(adapters, floor=None):
    """issue 18's targets, each marked met or missed: the ratio to the native run, the no-op median."""
    ratios = [f"{r['adapter']} {r['vs_native']:.3f}× ({'met' if r['vs_native'] >= ADAPTER_TARGET_RATIO else 'missed'})"
              for r in adapters if r["vs_native"] is not None]
    noops = [f"{r['adapter']} {r['noop_p50_us']:.0f} µs ({'met' if r['noop_p50_us'] < NOOP_TARGET_US else 'missed'}"
             f"{times_floor(r['noop_p50_us'], floor)})" for r in adapters]
    lines = []
    if ratios:
        lines.append(f"- Target: through the adapter within 10 % of the native run ({ADAPTER_TARGET_RATIO}× or more): "
                     + "; ".join(ratios) + ".")
    if noops:
        lines.append(f"- Target: the adapter's no-op round trip below {NOOP_TARGET_US} µs at the median: "
                     + "; ".join(noops) + ".")
    if noops and floor:
        lines.append(f"- The no-op floor in the same run: `cat` answering the same request line over the same kind "
                     f"of socket pair, timed by the same loop (bench/lock_bench `BM_Adapter/echo-floor`): "
                     f"p50 {floor['p50']:.0f} µs, p99 {floor['p99']:.0f} µs, measured with the uncontended floors; "
                     f"each adapter's probe runs as its contended run starts, when busy cores wake faster than idle "
                     f"ones, so an adapter can come out near it or under it.")
    return lines


def runs_text(median, runs):
    """"512 (498, 512, 530)": the median, then every run; the value alone for one run."""
    return f"{median:.0f}" + (" (" + ", ".join(f"{r:.0f}" for r in runs) + ")" if len(runs) > 1 else "")


def print_adapters(adapters):
    print("| library, through its adapter | nodes | acq/s | native acq/s | adapter / native | % of serial limit | "
          "no-op p50 | no-op p99 | Jain | abandoned | counter |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in adapters:
        counter = "exact" if r["counter_exact"] else ", ".join(r["lost"])
        unsafe = [v for v in r["verdicts"] if v != "safe"]
        if unsafe:
            counter += f" ({', '.join(unsafe)})"
        native = runs_text(r["native_acq_per_s"], r["native_runs"]) if r["native_acq_per_s"] is not None else "–"
        ratio = f"{r['vs_native']:.2f}×" if r["vs_native"] is not None else "–"
        print(f"| `{r['adapter']}`: {r['library']} {r['version']} | {r['nodes']} | {runs_text(r['acq_per_s'], r['runs'])} "
              f"| {native} | {ratio} | {r['percent_of_serial_limit']:.0f} % | {us(r['noop_p50_us'])} | "
              f"{us(r['noop_p99_us'])} | {r['jain']:.2f} | {r['abandoned']} | {counter} |")


# ---- main ----------------------------------------------------------------------------

def tables(rows_dir):
    """Prints both tables; returns the summary."""
    if not os.path.isdir(rows_dir):
        raise InputError(f"{rows_dir}: not a directory")
    bench_path = os.path.join(rows_dir, "lock_bench.json")
    cycles = bench_cycles(bench_path)
    echo_floor = bench_echo_floor(bench_path)
    peers, contended, natives, runs = read_row_dirs(rows_dir)
    limit = serial_limit(cycles, contended + natives + runs, bench_path)
    adapters = adapter_rows(runs, natives, limit)  # before anything is printed: it may fail

    uncontended = uncontended_rows(cycles, peers)
    lines, targets = target_lines(uncontended)
    print("## Uncontended: one client, acquire + release")
    print()
    print_uncontended(uncontended)
    print()
    print("\n".join(lines))
    print()
    print("## Contended: clients on one key, GET / hold / SET inside the lock")
    print()
    print(f"Serial limit: 1 / (hold {limit['hold_ms']:g} ms + 4 × RTT {limit['round_trip_us']:.1f} µs) = "
          f"{limit['acq_per_s']:.0f}/s; RTT = half the raw floor's cycle above, same run.")
    print()
    print_contended(contended, limit)
    adapter_lines = adapter_target_lines(adapters, echo_floor)
    if adapters:
        print()
        print("## Through the adapter: the contended workload, `locklab run --lock ext:NAME`")
        print()
        print("Every figure includes the adapter (a JSON line each way per request); its no-op round trip is "
              "shown, subtracted nowhere. Several runs of a row: the median, then each run; a native run and an "
              "adapter run alternate.")
        print()
        print_adapters(adapters)
        print()
        print("\n".join(adapter_lines))
    return {"schema": "locklab.peers/3",
            "uncontended": {"rows": uncontended, "targets": targets},
            "contended": {"serial_limit": limit, "rows": contended},
            "adapters": {"rows": adapters, "target_ratio": ADAPTER_TARGET_RATIO, "noop_target_us": NOOP_TARGET_US,
                         "noop_floor_us": echo_floor}}


def main(argv):
    if len(argv) != 2:
        print("usage: table.py ROWS_DIR", file=sys.stderr)
        return 2
    try:
        summary = tables(argv[1])
    except InputError as e:
        print(f"table.py: {e}", file=sys.stderr)
        return 1
    path = os.path.join(argv[1], "summary.json")
    with open(path + ".tmp", "w") as out:
        json.dump(summary, out, indent=1)
    os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
