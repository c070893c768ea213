#!/bin/sh
# scripts/time-adapter-start (docs/adapters.md, "The Java kit", "Measuring the start"): --help,
# bad arguments as one line and exit 2, and one small real measurement of ext:redis-py (Debian's
# python3-redis, the cheapest runtime) against the script's own redis-server: the JSON it writes
# has its schema and every sample reached `acquired`, alone and two at once. The numbers themselves
# are for a quiet machine (the coordinator's run); a loaded test machine's mean nothing, so none is
# bounded here. Exit 77 (skipped) without redis-server or python3-redis.
set -u
source=$1
script=$source/scripts/time-adapter-start
"$script" --help | grep -q -- '--parallel' || { echo "FAIL: --help does not list --parallel"; exit 1; }
for bad in "--runs 0" "--runs 101" "--runs x" "--parallel 33" "--rounds 0" "--lock ext:no-such-row" "--lock redis-py" \
           "--out /nonexistent-dir/x.json" "--nonsense"; do
  # shellcheck disable=SC2086 # each case is several words on purpose
  err=$("$script" $bad 2>&1 >/dev/null)
  rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: time-adapter-start $bad exited $rc, not 2"; exit 1; }
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || { echo "FAIL: time-adapter-start $bad: not one line: $err"; exit 1; }
done
echo "ok usage errors exit 2, one line each"
command -v redis-server >/dev/null || { echo "skip: no redis-server"; exit 77; }
/usr/bin/python3 -c 'import redis' 2>/dev/null || { echo "skip: no python3-redis"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$script" --lock ext:redis-py --runs 2 --parallel 2 --rounds 1 --out "$out/start.json" ||
  { echo "FAIL: the measurement exited $?"; exit 1; }
/usr/bin/python3 - "$out/start.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "locklab.timing.start/1", doc["schema"]
assert doc["cores"] >= 1 and len(doc["load_average_before"]) == 3 and "--runs 2" in doc["command"], doc
row, = doc["rows"]
assert row["lock"] == "ext:redis-py" and row["command"][-1].endswith("python/redis_py.py"), row
for part, n in (("alone", 2), ("parallel", 2)):
    got = row[part]
    assert got["samples"] == n and got["failed"] == 0, (part, got)
    assert 0 < got["init_ok_ms"]["median"] <= got["acquired_ms"]["median"] <= got["acquired_ms"]["max"], (part, got)
print("ok ext:redis-py measured: alone and two at once, every sample acquired")
PY
