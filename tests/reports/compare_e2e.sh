#!/usr/bin/env bash
# Two real CPU runs of the same command under mpirun, compared: no failure (the noise of a busy
# machine is not a regression); the same run with --accept and --min-busbw; an aborted run
# (rows removed) and a run over another transport do fail, naming why.
# Usage: compare_e2e.sh MPIEXEC CCBENCH WORK_DIR
set -u
mpiexec=$1 ccbench=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
run() {  # OUT_DIR [extra args]
  local out=$1; shift
  "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$ccbench" --device cpu --collective allreduce \
    --impl mpi,ring -b 8 -e 2M -f 4 -n 20 -w 3 --timeout 60 --out "$out" "$@" >"$out.log" 2>&1
}
run "$work/a" || { cat "$work/a.log"; fail "first run"; }
run "$work/b" --min-busbw 0.001 || { cat "$work/b.log"; fail "second run (with --min-busbw 0.001)"; }
grep -q "# Acceptance: PASS" "$work/b.log" || fail "--min-busbw verdict missing"
[ -f "$work/b/accept.xml" ] || fail "accept.xml not written beside the results"

"$ccbench" compare "$work/a" "$work/b" >"$work/same.txt" 2>&1
rc=$?
cat "$work/same.txt"
[ $rc = 0 ] || fail "two runs of one command: exit $rc"
rows=$(grep -vc '^#' "$work/a/results.csv")
grep -q "^# OK: 0 failures in $((rows - 1)) matched rows" "$work/same.txt" || fail "not every row matched"

# An aborted run: the header and the first 3 rows only.
mkdir -p "$work/aborted" && head -6 "$work/b/results.csv" >"$work/aborted/results.csv"
"$ccbench" compare "$work/a" "$work/aborted" --format md >"$work/aborted.txt" 2>&1
rc=$?
[ $rc = 4 ] || fail "aborted run: exit $rc, expected 4"
grep -q "MISSING now" "$work/aborted.txt" || fail "missing rows not named"

# Another transport: nothing matches until paired.
"$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$ccbench" --device cpu --collective allreduce --impl ring \
  --transport mpi -b 8 -e 2M -f 4 -n 20 -w 3 --timeout 60 --out "$work/c" >"$work/c.log" 2>&1 || fail "mpi run"
"$ccbench" compare "$work/a" "$work/c" >"$work/other.txt" 2>&1
rc=$?
[ $rc = 4 ] || fail "other transport: exit $rc, expected 4"
grep -q "FAILED: no row matched; impl is mpi,ring before and ring after; transport is mpi,shm before and mpi after" \
  "$work/other.txt" ||
  { cat "$work/other.txt"; fail "no-match message"; }
"$ccbench" compare "$work/a" "$work/c" --pair transport=shm:mpi --allow-missing --format json >"$work/pair.json" 2>&1
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['matched'] > 0, d['verdict']; print(d['verdict'])" \
  "$work/pair.json" || fail "pairing"
echo "compare_e2e: all checks passed"
