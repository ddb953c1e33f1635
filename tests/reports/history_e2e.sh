#!/usr/bin/env bash
# The SQLite history from the command line: two real CPU jobs appending to one store at the same
# time, `history` listing them and a case's trend, a run of another node imported and compared
# with --against-fleet, and a damaged store refused before anything is measured (exit 3).
# Usage: history_e2e.sh MPIEXEC CCBENCH WORK_DIR
set -u
mpiexec=$1 ccbench=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
db="$work/history.db"
run() {  # OUT_DIR
  "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$ccbench" --device cpu --collective allreduce --impl ring \
    -b 1K -e 1M -f 32 -n 10 -w 2 --timeout 60 --format csv,json --out "$1" --db "$db" >"$1.log" 2>&1
}
run "$work/a" & pa=$!
run "$work/b" & pb=$!
wait $pa || { cat "$work/a.log"; fail "job a"; }
wait $pb || { cat "$work/b.log"; fail "job b"; }
grep -q "# history: run [12] appended to $db" "$work/a.log" || fail "job a not appended"
grep -q "# history: run [12] appended to $db" "$work/b.log" || fail "job b not appended"

"$ccbench" history --db "$db" >"$work/list.txt" 2>&1 || fail "history"
cat "$work/list.txt"
[ "$(grep -c ' cpu x2 .*  6  OK$' "$work/list.txt")" = 2 ] || fail "the two runs (6 rows each) are not listed"
CCBENCH_DB="$db" "$ccbench" history --collective allreduce --impl ring --size 1M >"$work/trend.txt" 2>&1 || fail "trend"
cat "$work/trend.txt"
[ "$(grep -c 'allreduce ring/shm float .* 1 MiB' "$work/trend.txt")" = 4 ] || fail "trend: 2 runs x 2 placements"

# Another node of the same kind: run a's results under another host name.
cp -r "$work/a" "$work/other"
python3 - "$work/other/run.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["context"]["ranks_detail"]:
    r["host"] = "node-b"
json.dump(doc, open(sys.argv[1], "w"))
PY
"$ccbench" history --db "$db" --add "$work/other" | grep -q "added as run 3" || fail "--add"
"$ccbench" compare --against-fleet --db "$db" "$work/other" >"$work/fleet.txt" 2>&1
rc=$?
cat "$work/fleet.txt" | head -3
grep -q "# against the fleet: median of the latest runs of 1 other host of kind 'cpu x2'" "$work/fleet.txt" ||
  fail "fleet header"
grep -q "matched rows" "$work/fleet.txt" || fail "fleet comparison"
[ $rc = 0 ] || [ $rc = 4 ] || fail "--against-fleet: exit $rc"

# A damaged store: refused on every rank before measuring; no results folder left behind.
head -c 4096 /dev/urandom >"$work/damaged.db"
"$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$ccbench" --device cpu --impl ring -b 1K -e 1K -n 2 \
  --out "$work/never" --db "$work/damaged.db" >"$work/damaged.txt" 2>&1
rc=$?
cat "$work/damaged.txt" | head -3
[ $rc = 3 ] || fail "damaged store: exit $rc, expected 3"
grep -q "history $work/damaged.db: file is not a database (a damaged or foreign file: move it away" "$work/damaged.txt" ||
  fail "damaged store message"
[ ! -e "$work/never" ] || fail "a results folder was made for a run that never started"
echo "history_e2e: all checks passed"
