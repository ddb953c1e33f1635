#!/usr/bin/env bash
# `ccbench history` from the command line, without MPI: a missing store is refused unless adding
# (exit 2, no file made); imported runs keep their own verdict and exit code (a run that ended
# wrong, one that timed out, one without run.json: "unknown"); adding a run already stored is a
# note, not a second copy; a store that cannot be written gives the system's reason with exit 2,
# as --out does, and can still be read; another program's SQLite file (with a `meta` table of its
# own) is refused by --add and by a run before anything is written to it, left byte for byte.
# Usage: history_cli.sh CCBENCH SOURCE_DIR WORK_DIR
set -u
ccbench=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
csv="$src/tests/fixtures/cpu2core-20261130-np2/results.csv"

# A results folder: the fixture's results.csv and a run.json ending with EXIT and VERDICT.
folder() {  # DIR STARTED EXIT VERDICT
  mkdir -p "$1" && cp "$csv" "$1/results.csv"
  printf '{"schema_version": 3, "complete": true, "incomplete_reason": null, "exit_code": %s, "verdict": %s,
  "context": {"started_utc": "%s", "command_line": "ccbench -b 1K", "git_hash": "abc", "device": "cpu",
  "ranks_per_node": 2, "ranks_detail": [{"rank": 0, "host": "node01"}]}, "rows": []}\n' "$3" "$4" "$2" >"$1/run.json"
}
folder "$work/wrong" 2026-12-01T10:00:00Z 1 '"FAILED (exit code 1: wrong results)"'
folder "$work/timeout" 2026-12-01T11:00:00Z 5 '"FAILED (exit code 5: timeout or hang)"'
folder "$work/running" 2026-12-01T12:00:00Z null null
mkdir -p "$work/csv-only" && cp "$csv" "$work/csv-only/results.csv"

db="$work/h.db"
"$ccbench" history --db "$db" >"$work/missing.txt" 2>&1
rc=$?
cat "$work/missing.txt"
[ $rc = 2 ] || fail "a missing store: exit $rc, expected 2"
grep -q "history $db: no such file; give an existing history, or start one" "$work/missing.txt" || fail "missing: message"
[ ! -e "$db" ] || fail "reading a missing store made it"
"$ccbench" compare --against-fleet --db "$db" "$work/wrong" >"$work/fleet.txt" 2>&1
[ $? = 2 ] || { cat "$work/fleet.txt"; fail "compare --against-fleet with a missing store: not exit 2"; }
[ ! -e "$db" ] || fail "compare --against-fleet made the store"

"$ccbench" history --db "$db" --add "$work/wrong" --add "$work/timeout" --add "$work/running" --add "$work/csv-only" \
  >"$work/add.txt" 2>&1 || { cat "$work/add.txt"; fail "--add"; }
cat "$work/add.txt"
grep -q "$work/wrong added as run 1 (FAILED (exit code 1: wrong results), exit code 1)" "$work/add.txt" || fail "add: run 1"
"$ccbench" history --db "$db" >"$work/list.txt" 2>&1 || fail "history list"
cat "$work/list.txt"
grep -q "  1  .* FAILED (exit code 1: wrong results)$" "$work/list.txt" || fail "the wrong run's verdict was not kept"
grep -q "  2  .* FAILED (exit code 5: timeout or hang)$" "$work/list.txt" || fail "the timed-out run's verdict was not kept"
grep -q "  3  .* unknown ($work/running/run.json holds no verdict)$" "$work/list.txt" || fail "a run that had not ended"
grep -q "  4  .* unknown (no run.json beside $work/csv-only/results.csv)$" "$work/list.txt" || fail "a run without run.json"
! grep -q "imported from" "$work/list.txt" || fail "an import's verdict replaced"
python3 - "$db" <<'PY' || fail "exit codes as stored"
import sqlite3, sys
codes = [r[0] for r in sqlite3.connect(sys.argv[1]).execute("SELECT exit_code FROM runs ORDER BY id")]
assert codes == [1, 5, None, None], codes
PY

"$ccbench" history --db "$db" --add "$work/wrong" --add "$work/csv-only" >"$work/again.txt" 2>&1 || fail "adding again"
cat "$work/again.txt"
grep -q "# history: $work/wrong is already stored as run 1; not added again" "$work/again.txt" || fail "no note for run 1"
grep -q "# history: $work/csv-only is already stored as run 4; not added again" "$work/again.txt" || fail "no note for run 4"
[ "$("$ccbench" history --db "$db" | grep -c '^ ')" = 4 ] || fail "a run was stored twice"

# A store that cannot be written: its file and folder read-only. Root writes anyway, so as root
# the command runs without the capabilities that let it (setpriv), as any other user would.
mkdir -p "$work/ro" && cp "$db" "$work/ro/h.db" && chmod 444 "$work/ro/h.db" && chmod 555 "$work/ro"
as_user=()
[ "$(id -u)" = 0 ] && as_user=(setpriv --bounding-set -dac_override,-dac_read_search --)
"${as_user[@]}" "$ccbench" history --db "$work/ro/h.db" --add "$work/timeout" >"$work/ro.txt" 2>&1
rc=$?
cat "$work/ro.txt"
[ $rc = 2 ] || fail "a read-only store: exit $rc, expected 2 (as an unwritable --out)"
grep -q "history $work/ro/h.db: cannot write: Permission denied" "$work/ro.txt" || fail "read-only: the system's reason"
"${as_user[@]}" "$ccbench" history --db "$work/ro/h.db" >"$work/ro-list.txt" 2>&1 ||
  { cat "$work/ro-list.txt"; fail "a read-only store cannot be read"; }
[ "$(grep -c '^ ' "$work/ro-list.txt")" = 4 ] || fail "the read-only store lists other runs"
chmod 755 "$work/ro"

# Another program's SQLite file: refused (exit 3) before any write: no WAL mode, no tables of ours.
python3 - "$work/theirs.db" <<'PY' || fail "making a foreign file"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('owner', 'billing');"
                "CREATE TABLE invoices (n INTEGER); INSERT INTO invoices VALUES (7);")
c.commit()
PY
before=$(sha256sum <"$work/theirs.db")
"$ccbench" history --db "$work/theirs.db" --add "$work/wrong" >"$work/theirs.txt" 2>&1
rc=$?
cat "$work/theirs.txt"
[ $rc = 3 ] || fail "a foreign file: exit $rc, expected 3"
grep -q "history $work/theirs.db: not a ccbench history" "$work/theirs.txt" || fail "a foreign file: message"
"$ccbench" --device cpu -b 1K -e 1K -n 2 --out "$work/never" --db "$work/theirs.db" >"$work/theirs-run.txt" 2>&1
rc=$?
[ $rc = 3 ] && grep -q "not a ccbench history" "$work/theirs-run.txt" || { cat "$work/theirs-run.txt"; fail "a run: exit $rc"; }
[ "$(sha256sum <"$work/theirs.db")" = "$before" ] || fail "the foreign file was changed"
[ ! -e "$work/theirs.db-wal" ] && [ ! -e "$work/never" ] || fail "a WAL file or a results folder was left"
echo "history_cli: all checks passed"
