#!/bin/sh
# scripts/class-capacity at N=2 only (docs/labs/teaching.md): two students at once on this
# machine hold (their stories end as the lessons expect), and bad arguments exit 2. The full
# measurement (up to 30) is for a quiet machine; a loaded test machine's numbers mean nothing,
# hence the generous bound.
set -u
source=$1 build=$2
script=$source/scripts/class-capacity
for bad in "--students 0" "--students 65" "--students a" "--bound 0" "--nonsense"; do
  # shellcheck disable=SC2086 # each case is several words on purpose
  "$script" --build "$build" $bad >/dev/null 2>&1
  rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: class-capacity $bad exited $rc, not 2"; exit 1; }
done
echo "ok usage errors exit 2"
# The plan comes from teaching.md's typing slots: one that no lab runs as one block is refused.
tmp=$(mktemp "${TMPDIR:-/tmp}/class-capacity-plan-XXXXXX")
trap 'rm -f "$tmp"' EXIT
printf '%s\n' '- **Students type:**' '  ```sh' '  build/default/harness/locklab run --lock no-such-lab-block' '  ```' >"$tmp"
err=$("$script" --build "$build" --teaching "$tmp" --students 1 2>&1 >/dev/null)
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: a slot no lab runs exited $rc, not 1"; exit 1; }
echo "$err" | grep -q 'no lab runs as one runnable block' || { echo "FAIL: unclear error: $err"; exit 1; }
echo "ok a slot that no lab runs is refused"
json=$(mktemp -u "${TMPDIR:-/tmp}/class-capacity-XXXXXX.json")
trap 'rm -f "$tmp" "$json"' EXIT
out=$("$script" --build "$build" --students 2 --bound 400 --budget 500 --json "$json") || { echo "FAIL: exit $?"; exit 1; }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["capacity"] == 2 and d["rounds"][0]["held"], d' "$json" \
  || { echo "FAIL: --json does not say capacity 2"; exit 1; }
echo "$out"
said=$(sed -n 's/.*each typing the \([0-9]*\) commands.*/\1/p' "$source/docs/labs/teaching.md")
echo "$out" | grep -q "^class-capacity: .* $said commands a student" || { echo "FAIL: teaching.md says $said commands"; exit 1; }
echo "$out" | grep -q '^N=2 *held' || { echo "FAIL: two students did not hold"; exit 1; }
echo "$out" | grep -q '^capacity: 2 students' || { echo "FAIL: no capacity line for N=2"; exit 1; }
echo "ok two students held"
