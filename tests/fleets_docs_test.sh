#!/bin/sh
# docs/peers.md and README.md quote the committed `locklab fleets` reference
# (results/reference/fleets/fleets.md) exactly: docs/peers.md from its summary
# line to its end, between <!-- BEGIN fleets table ... --> and <!-- END fleets table -->;
# README.md its summary (the counts and the three lists), between
# <!-- BEGIN fleets summary ... --> and <!-- END fleets summary -->.
# Usage: fleets_docs_test.sh SOURCE_DIR. Exit 1 naming the file that differs.
set -eu
root="$1"
ref="$root/results/reference/fleets/fleets.md"
[ -f "$ref" ] || { echo "fleets_docs_test: no $ref (locklab fleets --out results/reference/fleets)"; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# between <!-- BEGIN NAME and <!-- END NAME, the marker lines left out
quoted() { sed -n "/^<!-- BEGIN $2 /,/^<!-- END $2 -->/p" "$1" | sed '1d;$d'; }
sed -n '/^[0-9]* pairs, /,$p' "$ref" >"$work/full"
sed -n '/^[0-9]* pairs, /,/^- Not shown/p' "$ref" >"$work/summary"
[ -s "$work/summary" ] || { echo "fleets_docs_test: $ref has no summary"; exit 1; }
quoted "$root/docs/peers.md" "fleets table" >"$work/docs"
quoted "$root/README.md" "fleets summary" >"$work/readme"
cmp -s "$work/full" "$work/docs" || { echo "fleets_docs_test: docs/peers.md does not quote $ref"; diff "$work/full" "$work/docs" | head -5; exit 1; }
cmp -s "$work/summary" "$work/readme" || { echo "fleets_docs_test: README.md does not quote the summary of $ref"; diff "$work/summary" "$work/readme" | head -5; exit 1; }
echo "fleets_docs_test: docs/peers.md and README.md quote $ref"
