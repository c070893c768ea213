#!/bin/sh
# `locklab scenarios` lists every story a teacher can run (issue 28 item 5): each
# add_scenario line of scenarios/CMakeLists.txt -- its name, every lock, every flag
# (--guard, --sigstop, --delayed-restart) -- appears in the listing. And every
# scenario main is composed from the story kit (issue 29): scenarios/*.cpp of 40 to
# 120 lines, each main() at most 60.
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
for file in "$source"/scenarios/*.cpp; do
  lines=$(wc -l < "$file")
  main=$(awk '/^int main\(/ {on = 1} on {n++} on && /^}/ {print n; exit}' "$file")
  [ "$lines" -ge 40 ] && [ "$lines" -le 120 ] || { echo "FAIL: $file has $lines lines (40 to 120)"; missing=1; }
  [ -n "$main" ] && [ "$main" -le 60 ] || { echo "FAIL: $file: main() has ${main:-no} lines (at most 60)"; missing=1; }
done
[ "$missing" -eq 0 ] || exit 1
echo "ok locklab scenarios lists all $count stories with every lock and flag; every main is 40-120 lines, main() <= 60"
