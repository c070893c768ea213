#!/bin/sh
# The docs test (ctest label `docs`): the labs' commands must keep working.
#
#   docs_test.sh --build DIR --source DIR [--include-later] LAB.md...   run the runnable blocks
#   docs_test.sh --build DIR --source DIR --lint LAB.md...              check a lab's shape
#                                       (a lab under a zh/ folder: its Chinese headings)
#
# A runnable block is a fenced block whose info string has the word `runnable`,
# followed directly by comment lines that say what to check (docs/labs/README.md):
#
#   ```sh runnable
#   build/default/scenarios/check_then_delete_race
#   ```
#   <!-- expect: verdict: race shown -->
#   <!-- expect-not: unexpected -->
#   <!-- exit: 0 -->         (default 0)
#   <!-- timeout: 60 -->     (seconds, default 60)
#
# Each block runs with `sh -e` in a fresh temp dir where build/default is a
# link to this build and results/reference a link to the committed results, so
# the commands read exactly as a student types them from the repository root and
# every file they write lands in the temp dir (removed afterwards). A block that
# writes anything but labs-out/ (git-ignored) there fails: in the repository it
# would leave files beside the sources. A block
# passes when it exits as expected within its timeout and its output (stdout and
# stderr) contains every `expect` text and no `expect-not` text.
# Blocks marked `runnable-later` use commands not built yet: skipped unless
# --include-later is given (how the lead checks them once the binaries exist).
#
# POSIX sh + awk + coreutils' timeout: no other dependency.
set -u

usage() {
  echo "usage: docs_test.sh --build DIR --source DIR [--include-later | --lint] LAB.md..." >&2
  exit 2
}

build_dir=
source_dir=
include_later=0
lint=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) [ $# -ge 2 ] || usage; build_dir=$2; shift 2 ;;
    --source) [ $# -ge 2 ] || usage; source_dir=$2; shift 2 ;;
    --include-later) include_later=1; shift ;;
    --lint) lint=1; shift ;;
    --) shift; break ;;
    -*) echo "docs_test.sh: unknown flag $1" >&2; usage ;;
    *) break ;;
  esac
done
[ -n "$build_dir" ] && [ -n "$source_dir" ] && [ $# -gt 0 ] || usage
[ -d "$build_dir" ] || { echo "docs_test.sh: no build dir $build_dir" >&2; exit 2; }
[ -d "$source_dir" ] || { echo "docs_test.sh: no source dir $source_dir" >&2; exit 2; }
build_dir=$(cd "$build_dir" && pwd)
source_dir=$(cd "$source_dir" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/locklab-docs-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Splits LAB.md into $2/N.sh (the block) and $2/N.meta (kind, line, checks),
# one pair per fenced block that is runnable or runnable-later, and lists every
# build/default/... path that a block not marked runnable-later names in
# $2/paths (one "line path" a line).
extract() {
  awk -v out="$2" '
    function flush_checks() { if (meta != "") { close(meta); meta = "" } }
    BEGIN { n = 0; inside = 0; meta = ""; paths = out "/paths"; printf "" > paths }
    {
      if (!inside && $0 ~ /^```/) {
        flush_checks()
        info = substr($0, 4)
        gsub(/[{}]/, " ", info)
        kind = ""
        m = split(info, words, /[ \t]+/)
        for (i = 1; i <= m; i++) {
          if (words[i] == "runnable") kind = "runnable"
          else if (words[i] == "runnable-later") kind = "later"
        }
        inside = 1; start = NR
        if (kind != "") {
          n++
          script = out "/" n ".sh"; meta = out "/" n ".meta"
          printf "" > script
          print "kind " kind > meta
          print "line " NR > meta
        }
        next
      }
      if (inside && $0 ~ /^```[ \t]*$/) {
        inside = 0
        if (kind != "") { close(script); collecting = 1 } else collecting = 0
        next
      }
      if (inside) {
        if (kind != "") print > script
        if (kind != "later") {
          rest = $0
          while (match(rest, /build\/default\/[A-Za-z0-9_\/.-]*[A-Za-z0-9_]/)) {
            print NR " " substr(rest, RSTART, RLENGTH) > paths
            rest = substr(rest, RSTART + RLENGTH)
          }
        }
        next
      }
      # The check comments directly under a runnable block.
      if (collecting && match($0, /^<!-- *(expect|expect-not|exit|timeout): .* -->[ \t]*$/)) {
        line = $0
        sub(/^<!-- */, "", line); sub(/ *-->[ \t]*$/, "", line)
        key = line; sub(/:.*/, "", key)
        value = line; sub(/^[^:]*: /, "", value)
        print key " " value > meta
        next
      }
      collecting = 0
      flush_checks()
    }
    END { flush_checks(); close(paths); if (inside) { print "unclosed fence opened on line " start > "/dev/stderr"; exit 1 } }
  ' "$1"
}

# Runs block $1 (files $2/$1.sh, $2/$1.meta) of lab $3; prints PASS/FAIL/SKIP.
run_block() {
  n=$1 dir=$2 lab=$3
  kind=$(sed -n 's/^kind //p' "$dir/$n.meta")
  line=$(sed -n 's/^line //p' "$dir/$n.meta")
  where="$lab:$line (block $n)"
  if [ "$kind" = later ] && [ "$include_later" = 0 ]; then
    echo "SKIP $where: runnable-later"
    skipped=$((skipped + 1))
    return
  fi
  want_exit=$(sed -n 's/^exit //p' "$dir/$n.meta" | tail -n 1)
  limit=$(sed -n 's/^timeout //p' "$dir/$n.meta" | tail -n 1)
  : "${want_exit:=0}" "${limit:=60}"
  if ! grep -q '^expect ' "$dir/$n.meta"; then
    echo "FAIL $where: no <!-- expect: ... --> line under the block"
    failed=$((failed + 1))
    return
  fi

  clean="$work/run-$n"
  mkdir -p "$clean/build" "$clean/results" "$clean/tmp"
  ln -s "$build_dir" "$clean/build/default"
  ln -s "$source_dir/results/reference" "$clean/results/reference"
  started=$(date +%s)
  (cd "$clean" && TMPDIR="$clean/tmp" timeout -k 10 "$limit" sh -e "$dir/$n.sh") >"$dir/$n.out" 2>&1
  status=$?
  took=$(( $(date +%s) - started ))

  problems=
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    problems="timed out after ${limit} s"
  elif [ "$status" != "$want_exit" ]; then
    problems="exit $status, want $want_exit"
  fi
  # A student runs the block in the repository: whatever it writes must land in
  # the git-ignored labs-out/ (docs/labs/README.md), not beside the sources.
  stray=$(cd "$clean" && find . -mindepth 1 -maxdepth 2 ! -path ./build ! -path ./build/default \
            ! -path ./results ! -path ./results/reference ! -path ./tmp ! -path './tmp/*' \
            ! -path ./labs-out ! -path './labs-out/*' | sed 's|^\./||' | sort | tr '\n' ' ')
  [ -z "$stray" ] || problems="$problems${problems:+; }wrote outside labs-out/: ${stray% }"
  while IFS= read -r check; do
    case "$check" in
      "expect "*)
        text=${check#expect }
        grep -qF -- "$text" "$dir/$n.out" || problems="$problems${problems:+; }missing: $text" ;;
      "expect-not "*)
        text=${check#expect-not }
        ! grep -qF -- "$text" "$dir/$n.out" || problems="$problems${problems:+; }present: $text" ;;
    esac
  done <"$dir/$n.meta"

  if [ -z "$problems" ]; then
    echo "PASS $where (${took} s)"
    passed=$((passed + 1))
  else
    echo "FAIL $where: $problems"
    echo "---- block"
    cat "$dir/$n.sh"
    echo "---- output (last 40 lines)"
    tail -n 40 "$dir/$n.out"
    echo "----"
    failed=$((failed + 1))
  fi
  rm -rf "$clean"
}

# A lab's shape (docs/labs/README.md): the sections every lab has, an answers
# file that exists, at least one runnable block, and only paths this build has.
# A Chinese lab (docs/labs/zh/) has the same sections under Chinese headings.
lint_lab() {
  lab=$1 dir=$2
  name=$(basename "$lab" .md)
  case "$lab" in
    */zh/*) headings='目标 运行 观察 问题' predict='先预测再运行' ;;
    *) headings='Goal Run Observe Questions' predict='predict' ;;
  esac
  for heading in $headings; do
    grep -q "^## $heading" "$lab" || { echo "FAIL $lab: no '## $heading' section"; failed=$((failed + 1)); }
  done
  grep -qi "$predict" "$lab" || { echo "FAIL $lab: no '$predict' (predict before you run) question"; failed=$((failed + 1)); }
  answers="$(dirname "$lab")/answers/$name.md"
  if [ ! -f "$answers" ]; then
    echo "FAIL $lab: no answers file $answers"; failed=$((failed + 1))
  elif ! grep -q "answers/$name.md" "$lab"; then
    echo "FAIL $lab: does not link answers/$name.md"; failed=$((failed + 1))
  fi
  grep -q '^kind runnable$' "$dir"/*.meta 2>/dev/null || { echo "FAIL $lab: no runnable block"; failed=$((failed + 1)); }
  while read -r at path; do
    [ -e "$build_dir/${path#build/default/}" ] ||
      { echo "FAIL $lab:$at: names $path, which this build does not have"; failed=$((failed + 1)); }
  done <"$dir/paths"
}

passed=0 failed=0 skipped=0
for lab in "$@"; do
  [ -f "$lab" ] || { echo "docs_test.sh: no such lab $lab" >&2; exit 2; }
  dir="$work/$(basename "$lab" .md)"
  mkdir -p "$dir"
  extract "$lab" "$dir" || { echo "FAIL $lab: cannot parse"; failed=$((failed + 1)); continue; }
  if [ "$lint" = 1 ]; then
    lint_lab "$lab" "$dir"
    continue
  fi
  count=0
  for meta in "$dir"/*.meta; do
    [ -e "$meta" ] || continue
    count=$((count + 1))
  done
  n=1
  while [ "$n" -le "$count" ]; do
    run_block "$n" "$dir" "$lab"
    n=$((n + 1))
  done
done

if [ "$lint" = 1 ]; then
  echo "lint: $# lab(s), $failed problem(s)"
else
  echo "docs: $passed passed, $failed failed, $skipped skipped (runnable-later)"
fi
[ "$failed" = 0 ]
