#!/usr/bin/env bash
# The history from the command line: two real CPU jobs appending to one store at the same time,
# `history` listing them and a case's trend, runs of other nodes imported and compared with
# --against-fleet (a node like its fleet: exit 0; one 10x slower: exit 4, every row), and a
# damaged store (SQLite) or a server that is not there (PostgreSQL) refused before anything is
# measured (exit 3). With STORE "postgres" (under tests/postgres/pg_server.py --databases
# e2e,fleet) the stores are PostgreSQL databases reached over 127.0.0.1 with the password in the
# URL, which no output and no results file may hold.
# Usage: history_e2e.sh MPIEXEC CCBENCH WORK_DIR [sqlite|postgres]
set -u
mpiexec=$1 ccbench=$2 work=$3 store=${4:-sqlite}
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
if [ "$store" = postgres ]; then
  server="postgresql://ccbench:$PG_FIXTURE_PASSWORD@127.0.0.1:$PG_FIXTURE_PORT"
  db="$server/e2e" fleet="$server/fleet" shown="postgresql://ccbench@127.0.0.1:$PG_FIXTURE_PORT/e2e"
else
  db="$work/history.db" fleet="$work/fleet.db" shown="$work/history.db"
fi
run() {  # OUT_DIR
  "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$ccbench" --device cpu --collective allreduce --impl ring \
    -b 1K -e 1M -f 32 -n 10 -w 2 --timeout 60 --format csv,json --out "$1" --db "$db" >"$1.log" 2>&1
}
run "$work/a" & pa=$!
run "$work/b" & pb=$!
wait $pa || { cat "$work/a.log"; fail "job a"; }
wait $pb || { cat "$work/b.log"; fail "job b"; }
grep -q "# history: run [12] appended to $shown" "$work/a.log" || { cat "$work/a.log"; fail "job a not appended"; }
grep -q "# history: run [12] appended to $shown" "$work/b.log" || fail "job b not appended"

"$ccbench" history --db "$db" >"$work/list.txt" 2>&1 || fail "history"
cat "$work/list.txt"
[ "$(grep -c ' cpu x2 .*  6  OK$' "$work/list.txt")" = 2 ] || fail "the two runs (6 rows each) are not listed"
CCBENCH_DB="$db" "$ccbench" history --collective allreduce --impl ring --size 1M >"$work/trend.txt" 2>&1 || fail "trend"
cat "$work/trend.txt"
[ "$(grep -c 'allreduce ring/shm float .* 1 MiB' "$work/trend.txt")" = 4 ] || fail "trend: 2 runs x 2 placements"

# A fleet of the same kind, in a store of its own: run a's results under three host names, and
# under a fourth with every time 10x longer. A node like its fleet: exit 0, every row matched and
# none slower; the slow node: exit 4, every matched row a failure. The rows are made quiet
# (mean = median, time_cv 0.05, p95 = 1.1 x median, fastest = median / 1.05) so that the verdict
# follows from the fleet alone: with the spreads of a loaded 2-core machine (a fastest iteration
# 4.8x below the median at 1 MiB under the sanitizers, a mean 5.5x below it) compare's noise
# allowance can exceed even 10x.
node() {  # NAME SLOWDOWN: run a's files under host NAME, times x SLOWDOWN, added to the fleet store
  cp -r "$work/a" "$work/$1"
  python3 - "$work/$1" "$1" "$2" <<'PY'
import csv, json, os, sys
folder, host, k = sys.argv[1], sys.argv[2], float(sys.argv[3])
doc = json.load(open(os.path.join(folder, "run.json")))
for r in doc["context"]["ranks_detail"]:
    r["host"] = host
def quiet(r, time, bw, fmt):
    median, avg = float(r[time("median")]), float(r[time("avg")])
    # A quiet row's mean is its median (a loaded machine can leave the mean 5x below it), and the
    # bandwidths from the mean follow.
    r[time("avg")] = fmt(median)
    for c in ("algbw", "busbw"):
        r[bw(c)] = fmt(float(r[bw(c)]) * avg / median)
    r[time("p95")] = fmt(median * 1.1)
    r[time("max")] = fmt(max(float(r[time("max")]), median * 1.1))  # p95 <= max, as a run has them
    r[time("cv")] = fmt(0.05)
    # compare's own spread of a row is median over fastest iteration: fastest = median / 1.05.
    r[time("min")] = fmt(median / 1.05)
    for c in ("avg", "median", "min", "p95", "max"):
        r[time(c)] = fmt(float(r[time(c)]) * k)
    for c in ("algbw", "busbw", "busbw_median"):
        r[bw(c)] = fmt(float(r[bw(c)]) / k)
for r in doc["rows"]:
    quiet(r, lambda c: "time_cv" if c == "cv" else f"time_{c}_us", lambda c: f"{c}_gbps", float)
json.dump(doc, open(os.path.join(folder, "run.json"), "w"))
path = os.path.join(folder, "results.csv")
lines = open(path).read().splitlines(keepends=True)
rows = list(csv.DictReader([l for l in lines if not l.startswith("#")]))
with open(path, "w", newline="") as f:
    f.write("".join(l for l in lines if l.startswith("#")))
    w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    for r in rows:
        quiet(r, lambda c: "time_cv" if c == "cv" else f"time_{c}[us]", lambda c: f"{c}[GB/s]", lambda x: f"{x:.6g}")
        w.writerow(r)
PY
  "$ccbench" history --db "$fleet" --add "$work/$1" >"$work/add-$1.txt" 2>&1
  grep -q "added as run" "$work/add-$1.txt" || { cat "$work/add-$1.txt"; fail "--add $1"; }
}
node node-a 1 && node node-b 1 && node node-c 1 && node node-slow 10
rows=$(grep -vc '^#' "$work/a/results.csv")
"$ccbench" compare --against-fleet --db "$fleet" "$work/node-c" >"$work/fleet.txt" 2>&1
rc=$?
head -3 "$work/fleet.txt"
grep -q "# against the fleet: median of the latest runs of 3 other hosts of kind 'cpu x2'" "$work/fleet.txt" ||
  fail "fleet header"
[ $rc = 0 ] || { cat "$work/fleet.txt"; fail "a node like its fleet: exit $rc, expected 0"; }
grep -q "^# OK: 0 failures in $((rows - 1)) matched rows" "$work/fleet.txt" || fail "a node like its fleet: verdict"
[ "$(grep -cE '^ +[0-9]+ [KMG]?i?B .* 1\.00x ' "$work/fleet.txt")" = $((rows - 1)) ] || fail "a ratio other than 1.00x"
"$ccbench" compare --against-fleet --db "$fleet" "$work/node-slow" >"$work/slow.txt" 2>&1
rc=$?
tail -2 "$work/slow.txt"
[ $rc = 4 ] || { cat "$work/slow.txt"; fail "a node 10x slower than its fleet: exit $rc, expected 4"; }
grep -q "^# FAILED: $((rows - 1)) failures in $((rows - 1)) matched rows" "$work/slow.txt" ||
  fail "a node 10x slower than its fleet: not every row a failure"

if [ "$store" = postgres ]; then
  # The password was in every URL given: no output and no results file holds it.
  ! grep -rqF "$PG_FIXTURE_PASSWORD" "$work" || { grep -rlF "$PG_FIXTURE_PASSWORD" "$work"; fail "the password leaked"; }
  grep -q '"command_line": ".*--db postgresql://ccbench@127.0.0.1:' "$work/a/run.json" || fail "run.json's command line"
  # A server that is not there: refused on every rank before measuring; no results folder.
  "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$ccbench" --device cpu --impl ring -b 1K -e 1K -n 2 \
    --out "$work/never" --db "postgresql://ccbench:$PG_FIXTURE_PASSWORD@127.0.0.1:1/e2e" >"$work/noserver.txt" 2>&1
  rc=$?
  head -3 "$work/noserver.txt"
  [ $rc = 3 ] || fail "no server: exit $rc, expected 3"
  grep -q "history postgresql://ccbench@127.0.0.1:1/e2e: cannot connect to PostgreSQL (host 127.0.0.1, port 1, database e2e, user ccbench)" \
    "$work/noserver.txt" || fail "no server: message"
  ! grep -qF "$PG_FIXTURE_PASSWORD" "$work/noserver.txt" || fail "no server: the password printed"
  [ ! -e "$work/never" ] || fail "a results folder was made for a run that never started"
  echo "history_e2e (postgres): all checks passed"
  exit 0
fi

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
