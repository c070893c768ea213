#!/usr/bin/python3
"""scripts/compare-peers' tables (bench/compare_peers/table.py) on small synthetic row
directories: the ratios and columns of the three tables (% of floor, × best peer,
% of the serial limit; through the adapter: × the native run, the no-op round trip), one-line errors on bad or missing input, compare-peers'
own usage errors, and redis-py's worker in its --cycles mode against a real
redis-server (skipped without Debian's python3-redis).

Run by ctest (label peers): python3 tests/peers_table_test.py
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "bench", "compare_peers", "table.py")
COMPARE_PEERS = os.path.join(ROOT, "scripts", "compare-peers")
REDIS_PY_WORKER = os.path.join(ROOT, "bench", "compare_peers", "redis_py_worker.py")


def bench_run(name, real_time_us, repetition=0):
    return {"name": name, "run_name": name, "run_type": "iteration", "repetition_index": repetition,
            "iterations": 1000, "real_time": real_time_us, "cpu_time": real_time_us / 2, "time_unit": "us"}


def write_json(path, document):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(document, f)


class RowsDir:
    """A synthetic ROWS_DIR, as one compare-peers run would leave it."""

    # Floor 40 µs per cycle (median of 39, 40, 41): RTT 20 µs, so with hold 1 ms
    # the serial limit is 1e6 / (1000 + 80) = 925.9/s.
    BENCH = [bench_run("BM_Cycle/floor/nodes:1", t, i) for i, t in enumerate((41, 39, 40))] + \
        [bench_run("BM_Cycle/lua-safe-delete/nodes:1", t, i) for i, t in enumerate((42, 50, 42))] + \
        [bench_run("BM_Cycle/fanout-floor/nodes:5", t, i) for i, t in enumerate((200, 200, 200))] + \
        [bench_run("BM_Cycle/redlock/nodes:5", t, i) for i, t in enumerate((250, 250, 250))] + \
        [{"name": "BM_Cycle/floor/nodes:1_median", "run_name": "BM_Cycle/floor/nodes:1", "run_type": "aggregate",
          "aggregate_name": "median", "real_time": 1.0, "time_unit": "us"}] + \
        [dict(bench_run("BM_Adapter/echo-floor", 15, i), p50_us=p50, p99_us=p99)  # no-op floor: p50 11, p99 35
         for i, (p50, p99) in enumerate(((12, 40), (10, 30), (11, 35)))]

    def __init__(self, directory):
        self.directory = directory
        self.rows = 0
        write_json(os.path.join(directory, "lock_bench.json"), {"context": {}, "benchmarks": self.BENCH})

    def row(self, meta, workers=None, locklab=None):
        self.rows += 1
        row = os.path.join(self.directory, f"{self.rows:02d}")
        write_json(os.path.join(row, "meta.json"), meta)
        if workers is not None:
            with open(os.path.join(row, "workers.jsonl"), "w") as f:
                f.writelines(json.dumps(w) + "\n" for w in workers)
        if locklab is not None:
            write_json(os.path.join(row, "locklab.json"), locklab)
        return row

    def uncontended_peer(self, name, nodes, cycles, duration_s=2):
        return self.row({"name": name, "kind": "peer", "workload": "uncontended", "nodes": nodes,
                         "duration_s": duration_s},
                        workers=[{"peer": name, "worker": 0, "mode": "cycles", "cycles": cycles, "abandoned": 0,
                                  "errors": 0, "release_failures": 0, "cycle_p50_us": 95.5, "cycle_p99_us": 240}])

    def contended_peer(self, name, per_worker, counter_final=None, duration_s=1, beside=None):
        acquired = sum(per_worker)
        meta = {"name": name, "kind": "peer", "workload": "contended", "nodes": 1, "duration_s": duration_s,
                "hold_ms": 1, "counter_final": acquired if counter_final is None else counter_final}
        if beside:
            meta["beside"] = beside  # a native run for that adapter's comparison only
        return self.row(meta,
                        workers=[{"worker": i, "acquired": n, "abandoned": 0, "errors": 0,
                                  "waits_us": [1000 * (k + 1) for k in range(n)]} for i, n in enumerate(per_worker)])

    def contended_locklab(self, name, acq_per_s, acquired, duration_s=1):
        return self.row({"name": name, "kind": "locklab", "workload": "contended", "nodes": 1,
                         "duration_s": duration_s, "hold_ms": 1, "counter_final": acquired},
                        locklab={"totals": {"acquired": acquired, "timeouts": 0, "errors": 0, "unknown": 0},
                                 "throughput": {"acquisitions_per_s": acq_per_s},
                                 "latency": {"wait_us": {"p99": 5000}},
                                 "fairness": {"max_wait_us": 9000, "jain": 0.99, "per_client_acquired": [acquired]},
                                 "config": {"clients": 1}, "verdict": "safe"})


    def adapter(self, name, native, acq_per_s, acquired, noop_p50_us=19.0, noop_p99_us=80.0, verdict="safe"):
        adapter = f"ext:{name}"
        return self.row({"name": adapter, "kind": "adapter", "adapter": adapter, "native": native,
                         "workload": "contended", "nodes": 1, "duration_s": 1, "hold_ms": 1,
                         "counter_final": acquired},
                        locklab={"totals": {"acquired": acquired, "timeouts": 0, "errors": 0, "unknown": 0},
                                 "throughput": {"acquisitions_per_s": acq_per_s},
                                 "latency": {"wait_us": {"p99": 5000}},
                                 "fairness": {"max_wait_us": 9000, "jain": 0.99, "per_client_acquired": [acquired]},
                                 "config": {"clients": 1}, "verdict": verdict,
                                 "adapters": {adapter: {"library": name, "version": "1.0.0",
                                                        "noop_us": {"p50": noop_p50_us, "p99": noop_p99_us}}}})


def run_table(directory):
    return subprocess.run([sys.executable, TABLE, directory], capture_output=True, text=True, timeout=60)


def table_lines(stdout, first_cell):
    return [line for line in stdout.splitlines() if line.startswith(f"| {first_cell} |")]


class TableTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="peers-table-test-")
        self.addCleanup(shutil.rmtree, self.directory, ignore_errors=True)
        self.rows = RowsDir(self.directory)

    def full_run(self):
        self.rows.uncontended_peer("redis-py `Lock`", 1, cycles=20000)     # 10,000/s: the best 1-node peer
        self.rows.uncontended_peer("redis-semaphore `Mutex`", 1, cycles=16000)  # 8,000/s
        self.rows.uncontended_peer("node-redlock 5", 5, cycles=6000)       # 3,000/s on 5 nodes
        self.rows.contended_peer("redis-py `Lock`", [300, 163])  # 463/s: 50 % of 925.9; Jain 0.92
        self.rows.contended_locklab("locklab `fair-queue`", 833.3, 833)     # 90 % of 925.9
        done = run_table(self.directory)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_uncontended_rows_against_the_floor_and_the_best_peer(self):
        out = self.full_run()
        # Floor: median 40 µs (not the aggregate's 1 µs), 25,000/s; lua-safe-delete median 42 µs, 23,810/s.
        self.assertEqual(table_lines(out, "raw hiredis floor: `SET NX PX` + `DEL`, blocking (2 round trips)"),
                         ["| raw hiredis floor: `SET NX PX` + `DEL`, blocking (2 round trips) | 1 | 25000 | 40.0 µs "
                          "| – | – | 100 % | 2.50× |"])
        self.assertEqual(table_lines(out, "locklab `lua-safe-delete`"),
                         ["| locklab `lua-safe-delete` | 1 | 23810 | 42.0 µs | – | – | 95 % | 2.38× |"])
        self.assertEqual(table_lines(out, "redis-semaphore `Mutex`")[0],
                         "| redis-semaphore `Mutex` | 1 | 8000 | 125 µs | 95.5 µs | 240 µs | 32 % | 0.80× |")
        # Five nodes: against the fan-out floor (200 µs) and the 5-node peer only.
        self.assertEqual(table_lines(out, "locklab `redlock`"),
                         ["| locklab `redlock` | 5 | 4000 | 250 µs | – | – | 80 % | 1.33× |"])

    def test_uncontended_table_comes_first_and_groups_by_nodes(self):
        out = self.full_run()
        names = [line.split(" | ")[0][2:] for line in out.splitlines() if line.startswith("| ")]
        self.assertLess(out.index("## Uncontended"), out.index("## Contended"))
        self.assertEqual(names[:8], ["lock", "raw hiredis floor: `SET NX PX` + `DEL`, blocking (2 round trips)",
                                     "redis-py `Lock`", "redis-semaphore `Mutex`", "locklab `lua-safe-delete`",
                                     "raw fan-out floor: the same to 5 nodes at once, fds polled (2 round trips)",
                                     "node-redlock 5", "locklab `redlock`"])

    def test_targets_say_met_or_missed(self):
        out = self.full_run()
        self.assertIn("- Target, 1 node: at least 95 % of the floor and 1.3× the best peer (redis-py `Lock`): "
                      "locklab `lua-safe-delete` 95 % (met), 2.38× (met).", out)
        self.assertIn("- Target, 5 nodes: at least 90 % of the fan-out floor and 1.3× the best peer (node-redlock 5): "
                      "locklab `redlock` 80 % (missed), 1.33× (met).", out)

    def test_contended_rows_against_the_measured_serial_limit(self):
        out = self.full_run()
        self.assertIn("Serial limit: 1 / (hold 1 ms + 4 × RTT 20.0 µs) = 926/s", out)
        self.assertIn("| lock | nodes | acq/s | % of serial limit | p99 wait |", out)
        contended = out[out.index("## Contended"):]
        self.assertEqual(table_lines(contended, "redis-py `Lock`"),
                         ["| redis-py `Lock` | 1 | 463 | 50 % | 296.0 ms | 300.0 ms | 0.92 | 0 | exact | 1.00× |"])
        self.assertEqual(table_lines(contended, "locklab `fair-queue`"),
                         ["| locklab `fair-queue` | 1 | 833 | 90 % | 5.0 ms | 9.0 ms | 0.99 | 0 | exact | 1.80× |"])

    def test_summary_holds_both_tables(self):
        self.full_run()
        with open(os.path.join(self.directory, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["schema"], "locklab.peers/3")
        self.assertEqual(summary["adapters"]["rows"], [])
        self.assertAlmostEqual(summary["contended"]["serial_limit"]["acq_per_s"], 1e6 / 1080)
        self.assertAlmostEqual(summary["contended"]["serial_limit"]["round_trip_us"], 20.0)
        lua = next(r for r in summary["uncontended"]["rows"] if r["name"] == "locklab `lua-safe-delete`")
        self.assertAlmostEqual(lua["percent_of_floor"], 100 * 40 / 42)
        self.assertAlmostEqual(lua["vs_best_peer"], (1e6 / 42) / 10000)
        redlock = next(t for t in summary["uncontended"]["targets"] if t["lock"] == "locklab `redlock`")
        self.assertEqual((redlock["floor_met"], redlock["peer_met"], redlock["best_peer"]),
                         (False, True, "node-redlock 5"))
        fair = next(r for r in summary["contended"]["rows"] if r["name"] == "locklab `fair-queue`")
        self.assertAlmostEqual(fair["percent_of_serial_limit"], 100 * 833.3 * 1080 / 1e6)

    def adapter_run(self):
        self.rows.contended_peer("redis-py `Lock`", [300, 163])  # the contended table's row: not compared
        self.rows.contended_locklab("locklab `fair-queue`", 833.3, 833)
        # Alternating, as compare-peers runs them: native 463 and 451/s (median 457), adapter 440, 430, 450
        # (median 440): 0.963× native, 48 % of 925.9.
        for native, adapter in (([300, 163], 440.0), ([250, 201], 430.0), (None, 450.0)):
            if native:
                self.rows.contended_peer("redis-py `Lock`", native, beside="ext:redis-py")
            self.rows.adapter("redis-py", "redis-py `Lock`", adapter, int(adapter),
                              noop_p50_us=25.0 if adapter == 430.0 else 19.0)
        self.rows.adapter("redis-lock", None, 500.0, 500, noop_p50_us=62.0, noop_p99_us=900.0)  # 54 %, no native
        done = run_table(self.directory)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_adapter_rows_beside_the_native_run_and_the_serial_limit(self):
        out = self.adapter_run()
        self.assertLess(out.index("## Contended"), out.index("## Through the adapter"))
        through = out[out.index("## Through the adapter"):]
        self.assertIn("| library, through its adapter | nodes | acq/s | native acq/s | adapter / native | "
                      "% of serial limit | no-op p50 | no-op p99 | Jain | abandoned | counter |", through)
        self.assertEqual(table_lines(through, "`ext:redis-py`: redis-py 1.0.0"),
                         ["| `ext:redis-py`: redis-py 1.0.0 | 1 | 440 (440, 430, 450) | 457 (463, 451) | 0.96× | "
                          "48 % | 19.0 µs | 80.0 µs | 0.99 | 0 | exact |"])
        self.assertEqual(table_lines(through, "`ext:redis-lock`: redis-lock 1.0.0"),
                         ["| `ext:redis-lock`: redis-lock 1.0.0 | 1 | 500 | – | – | 54 % | 62.0 µs | 900 µs | "
                          "0.99 | 0 | exact |"])
        # The adapter runs and the native runs beside them are not in the contended table.
        contended = out[out.index("## Contended"):out.index("## Through the adapter")]
        self.assertEqual(table_lines(contended, "ext:redis-py"), [])
        self.assertEqual(len(table_lines(contended, "redis-py `Lock`")), 1)

    def test_adapter_targets_say_met_or_missed(self):
        out = self.adapter_run()
        self.assertIn("- Target: through the adapter within 10 % of the native run (0.9× or more): "
                      "ext:redis-py 0.963× (met).", out)
        self.assertIn("- Target: the adapter's no-op round trip below 50 µs at the median: "
                      "ext:redis-py 19 µs (met, 1.7× the floor); ext:redis-lock 62 µs (missed, 5.6× the floor).", out)
        self.assertIn("- The no-op floor in the same run: `cat` answering the same request line over the same kind "
                      "of socket pair, timed by the same loop (bench/lock_bench `BM_Adapter/echo-floor`): "
                      "p50 11 µs, p99 35 µs, measured with the uncontended floors;", out)

    def test_adapter_targets_without_a_measured_floor(self):
        # A lock_bench run without BM_Adapter/echo-floor (one made before it existed): no ratio, no floor line.
        write_json(os.path.join(self.directory, "lock_bench.json"),
                   {"benchmarks": [r for r in RowsDir.BENCH if r["name"] != "BM_Adapter/echo-floor"]})
        out = self.adapter_run()
        self.assertIn("ext:redis-py 19 µs (met); ext:redis-lock 62 µs (missed).", out)
        self.assertNotIn("no-op floor", out)

    def test_adapter_summary(self):
        self.adapter_run()
        with open(os.path.join(self.directory, "summary.json")) as f:
            summary = json.load(f)
        rows = {r["adapter"]: r for r in summary["adapters"]["rows"]}
        self.assertEqual(len(summary["adapters"]["rows"]), 2, "one row per adapter, its runs in it")
        self.assertEqual(rows["ext:redis-py"]["runs"], [440.0, 430.0, 450.0])
        self.assertEqual(rows["ext:redis-py"]["native_runs"], [463.0, 451.0])
        self.assertAlmostEqual(rows["ext:redis-py"]["vs_native"], 440 / 457)
        self.assertAlmostEqual(rows["ext:redis-py"]["native_acq_per_s"], 457)
        self.assertIsNone(rows["ext:redis-lock"]["vs_native"])
        self.assertAlmostEqual(rows["ext:redis-lock"]["percent_of_serial_limit"], 100 * 500 * 1080 / 1e6)
        self.assertEqual((rows["ext:redis-lock"]["noop_p50_us"], rows["ext:redis-lock"]["noop_p99_us"]), (62.0, 900.0))
        self.assertEqual(summary["adapters"]["noop_floor_us"], {"p50": 11.0, "p99": 35.0})

    def test_an_adapter_run_that_is_not_safe_says_its_verdict(self):
        self.rows.contended_peer("redis-py `Lock`", [300, 163])
        self.rows.adapter("redis-lock", None, 500.0, 500, verdict="violation")
        self.rows.adapter("redis-lock", None, 510.0, 510)
        done = run_table(self.directory)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("| exact (violation) |", done.stdout)

    def test_lost_updates_show_in_the_counter_column(self):
        self.rows.contended_peer("lossy", [10, 10], counter_final=18)
        done = run_table(self.directory)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("| 18 of 20 |", done.stdout)


class BadInputTest(unittest.TestCase):
    """Every bad input: one line on stderr naming the problem, exit 1, nothing on stdout, no summary."""

    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="peers-table-test-")
        self.addCleanup(shutil.rmtree, self.directory, ignore_errors=True)

    def assert_one_line_error(self, mentions, directory=None):
        done = run_table(directory or self.directory)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertEqual(done.stdout, "")
        self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
        self.assertTrue(done.stderr.startswith("table.py: "), done.stderr)
        self.assertIn(mentions, done.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.directory, "summary.json")))

    def test_missing_lock_bench(self):
        os.makedirs(os.path.join(self.directory, "01"))
        self.assert_one_line_error("lock_bench.json")

    def test_lock_bench_not_json(self):
        with open(os.path.join(self.directory, "lock_bench.json"), "w") as f:
            f.write("{not json")
        self.assert_one_line_error("lock_bench.json: not JSON")

    def test_no_floor_for_the_serial_limit(self):
        write_json(os.path.join(self.directory, "lock_bench.json"),
                   {"benchmarks": [bench_run("BM_Cycle/lua-safe-delete/nodes:1", 42)]})
        self.assert_one_line_error("no BM_Cycle/floor/nodes:1")

    def test_failed_benchmark(self):
        run = bench_run("BM_Cycle/floor/nodes:1", 40)
        run.update(error_occurred=True, error_message="raw DEL did not delete")
        write_json(os.path.join(self.directory, "lock_bench.json"), {"benchmarks": [run]})
        self.assert_one_line_error("raw DEL did not delete")

    def test_meta_without_workload(self):
        rows = RowsDir(self.directory)
        rows.row({"name": "x", "kind": "peer", "nodes": 1, "duration_s": 1})
        self.assert_one_line_error("meta.json: no field workload")

    def test_worker_line_not_json(self):
        rows = RowsDir(self.directory)
        row = rows.uncontended_peer("redis-py", 1, cycles=10)
        with open(os.path.join(row, "workers.jsonl"), "a") as f:
            f.write("Traceback (most recent call last):\n")
        self.assert_one_line_error("workers.jsonl: a line is not JSON")

    def test_missing_workers_file(self):
        RowsDir(self.directory).row({"name": "x", "kind": "peer", "workload": "uncontended", "nodes": 1,
                                     "duration_s": 1})
        self.assert_one_line_error("workers.jsonl")

    def test_zero_duration(self):
        RowsDir(self.directory).uncontended_peer("redis-py", 1, cycles=10, duration_s=0)
        self.assert_one_line_error("duration_s must be positive")

    def test_adapter_without_its_native_row(self):
        rows = RowsDir(self.directory)
        rows.adapter("redis-py", "redis-py `Lock`", 440.0, 440)
        rows.contended_peer("redis-py `Lock`", [300, 163])  # in the contended table, not beside the adapter
        self.assert_one_line_error("ext:redis-py: no native run of 'redis-py `Lock`' beside it to compare with")

    def test_adapter_run_without_its_probe(self):
        rows = RowsDir(self.directory)
        row = rows.adapter("redis-lock", None, 500.0, 500)
        with open(os.path.join(row, "locklab.json")) as f:
            document = json.load(f)
        del document["adapters"]
        write_json(os.path.join(row, "locklab.json"), document)
        self.assert_one_line_error("locklab.json: no field adapters.ext:redis-lock")

    def test_not_a_directory(self):
        self.assert_one_line_error("not a directory", directory=os.path.join(self.directory, "nope"))

    def test_usage(self):
        done = subprocess.run([sys.executable, TABLE], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stderr, "usage: table.py ROWS_DIR\n")


class ComparePeersUsageTest(unittest.TestCase):
    """Bad arguments stop compare-peers before it installs or starts anything."""

    def check(self, *args, mentions):
        done = subprocess.run(["bash", COMPARE_PEERS, *args], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
        self.assertIn(mentions, done.stderr)

    def test_bad_arguments(self):
        self.check("--duration", "x", mentions="--duration must be positive seconds, got x")
        self.check("--duration", "0", mentions="--duration must be positive seconds, got 0")
        self.check("--clients", "0", mentions="--clients must be 1-64, got 0")
        self.check("--clients", mentions="--clients needs a value")
        self.check("--cycles", mentions="unknown argument --cycles")
        with tempfile.NamedTemporaryFile() as a_file:
            self.check("--out", a_file.name, mentions="is not a writable directory")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisPyCyclesTest(unittest.TestCase):
    """redis_py_worker.py --cycles: acquire + release only, one JSON line, the lock left free."""

    def setUp(self):
        try:
            import redis  # noqa: F401  (Debian's python3-redis)
        except ImportError:
            self.skipTest("python3-redis is not installed (scripts/setup installs it)")
        if not shutil.which("redis-server"):
            self.skipTest("redis-server is not installed")
        self.port = free_port()
        self.directory = tempfile.mkdtemp(prefix="peers-cycles-test-")
        self.addCleanup(shutil.rmtree, self.directory, ignore_errors=True)
        server = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                   "--appendonly", "no", "--dir", self.directory],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(server.wait, timeout=30)
        self.addCleanup(server.terminate)
        import redis
        self.client = redis.Redis(host="127.0.0.1", port=self.port)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def test_cycles_mode_counts_cycles_without_a_counter(self):
        done = subprocess.run([sys.executable, REDIS_PY_WORKER, "--cycles", "--lock", f"127.0.0.1:{self.port}",
                               "--key", "locklab:lock", "--start", str(time.time()), "--duration", "0.3"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        stats = json.loads(done.stdout)
        self.assertEqual(stats["mode"], "cycles")
        self.assertGreater(stats["cycles"], 0)
        self.assertEqual((stats["abandoned"], stats["errors"], stats["release_failures"]), (0, 0, 0))
        self.assertGreater(stats["cycle_p50_us"], 0)
        self.assertLessEqual(stats["cycle_p50_us"], stats["cycle_p99_us"])
        self.assertEqual(self.client.exists("locklab:lock"), 0)  # released every time
        self.assertEqual(self.client.exists("locklab:counter"), 0)  # no counter touched

    def test_without_cycles_a_counter_is_required(self):
        done = subprocess.run([sys.executable, REDIS_PY_WORKER, "--lock", f"127.0.0.1:{self.port}",
                               "--start", "0", "--duration", "0.1"], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--counter is required", done.stderr)


if __name__ == "__main__":
    unittest.main()
