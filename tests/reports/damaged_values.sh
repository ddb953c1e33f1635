#!/usr/bin/env bash
# Values are checked before they are judged, from the command line: a results.csv whose times
# and bandwidths are nan, -1 or inf (every figure of one row, then of every row) fails `compare`
# (DAMAGED, file and line, exit 4) and every `accept` check over it (exit 4), and is refused by
# `history --add` (exit 2, nothing stored); inf never reads "infx faster".
# Usage: damaged_values.sh CCBENCH SOURCE_DIR WORK_DIR
set -u
ccbench=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
good="$src/tests/fixtures/cpu2core-20261130-np2/results.csv"

# DIR VALUE ROWS: a copy of the good run with VALUE in every time and bandwidth column of its
# first ROWS rows (all: every row).
damage() {
  mkdir -p "$1"
  python3 - "$good" "$1/results.csv" "$2" "$3" <<'PY'
import csv, sys
src, dst, value, rows = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
lines = open(src).read().splitlines(True)
first = next(i for i, l in enumerate(lines) if not l.startswith("#"))
header = next(csv.reader([lines[first]]))
cols = [i for i, h in enumerate(header) if h.startswith("time_") or "bw[" in h]
out = lines[:first + 1]
for n, line in enumerate(lines[first + 1:]):
    r = next(csv.reader([line]))
    if (rows == "all" or n < int(rows)) and r[header.index("status")] == "ok":
        for i in cols:
            r[i] = value
    out.append(",".join(r) + "\n")
open(dst, "w").writelines(out)
PY
}
line_of_first_row=$(( $(grep -c '^#' "$good") + 2 ))

for value in nan -1 inf; do
  damage "$work/one-$value" "$value" 1
  damage "$work/all-$value" "$value" all

  "$ccbench" compare "$good" "$work/one-$value" >"$work/compare-$value.txt" 2>&1
  rc=$?
  [ $rc = 4 ] || { cat "$work/compare-$value.txt"; fail "compare good -> $value: exit $rc, expected 4"; }
  grep -q "^# DAMAGED (after $work/one-$value/results.csv:$line_of_first_row: time_avg\[us\] is " \
    "$work/compare-$value.txt" || { cat "$work/compare-$value.txt"; fail "compare: the $value row not named with its line"; }
  grep -q "^# FAILED: 1 failure in " "$work/compare-$value.txt" || fail "compare $value: verdict"
  ! grep -q "infx\|nanx" "$work/compare-$value.txt" || fail "compare $value: a ratio of a damaged value was printed"
  "$ccbench" compare "$work/all-$value" "$good" >"$work/compare-all-$value.txt" 2>&1
  [ $? = 4 ] || fail "compare $value (every row) -> good: not a failure"

  "$ccbench" accept --min-busbw 0.001 "$work/all-$value" >"$work/accept-$value.txt" 2>&1
  rc=$?
  [ $rc = 4 ] || { cat "$work/accept-$value.txt"; fail "accept --min-busbw on $value: exit $rc, expected 4"; }
  grep -q "FAIL min_busbw 0.001 GB/s" "$work/accept-$value.txt" || fail "accept $value: min_busbw not failed"
  grep -q "DAMAGED, not judged ($work/all-$value/results.csv:" "$work/accept-$value.txt" || fail "accept $value: no line"
  printf 'rules:\n  - name: every figure\n    require: {min_busbw: 0, max_latency_us: 1e9, max_time_cv: 100, max_p95_over_median: 1e9}\n' \
    >"$work/rules.yaml"
  "$ccbench" accept --rules "$work/rules.yaml" "$work/all-$value" >"$work/rules-$value.txt" 2>&1
  rc=$?
  [ $rc = 4 ] || { cat "$work/rules-$value.txt"; fail "accept rules on $value: exit $rc, expected 4"; }
  [ "$(grep -c '^#   FAIL ' "$work/rules-$value.txt")" = 4 ] || { cat "$work/rules-$value.txt"; fail "accept $value: not every check failed"; }
  ! grep -q "^#   PASS" "$work/rules-$value.txt" || fail "accept $value: a check passed"

  "$ccbench" history --db "$work/h-$value.db" --add "$work/one-$value" >"$work/history-$value.txt" 2>&1
  rc=$?
  [ $rc = 2 ] || { cat "$work/history-$value.txt"; fail "history --add $value: exit $rc, expected 2"; }
  grep -q "$work/one-$value/results.csv:$line_of_first_row: time_avg\[us\] is " "$work/history-$value.txt" ||
    { cat "$work/history-$value.txt"; fail "history --add $value: the row not named"; }
  [ ! -e "$work/h-$value.db" ] || fail "history --add $value: a store was made"
done
echo "damaged_values: all checks passed"
