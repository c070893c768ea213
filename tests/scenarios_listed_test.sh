#!/bin/sh
# `locklab scenarios` lists every story a teacher can run (issue 28 item 5): each
# add_scenario line of scenarios/CMakeLists.txt -- its name, every lock, every flag
# (--guard, --sigstop, --delayed-restart) -- appears in the listing.
set -u
source=$1 locklab=$2
listing=$("$locklab" scenarios) || { echo "FAIL: locklab scenarios exited $?"; exit 1; }
missing=0
stories=$(mktemp) && trap 'rm -f "$stories"' EXIT
sed -n 's/^add_scenario(\([a-z_0-9]*\) LOCKS \([^)]*\))$/\1 \2/p' "$source/scenarios/CMakeLists.txt" > "$stories"
while read -r name rest; do
  block=$(printf '%s\n' "$listing" | awk -v n="$name" '$1 == n {on = 1; print; next} /^[a-z_0-9]+ / {on = 0} on')
  [ -n "$block" ] || { echo "FAIL: $name is not listed"; missing=1; continue; }
  locks=${rest%% FLAGS *} flags=""
  [ "$locks" != "$rest" ] && flags=${rest#* FLAGS }
  for lock in $locks; do
    printf '%s\n' "$block" | grep -q " $lock (" || { echo "FAIL: $name does not list lock $lock"; missing=1; }
  done
  for flag in $flags; do
    printf '%s\n' "$block" | grep -q -- "--$flag:" || { echo "FAIL: $name does not list --$flag"; missing=1; }
  done
done < "$stories"
count=$(wc -l < "$stories")
[ "$missing" -eq 0 ] || exit 1
echo "ok locklab scenarios lists all $count stories with every lock and flag"
