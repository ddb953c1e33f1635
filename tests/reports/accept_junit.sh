#!/usr/bin/env bash
# `ccbench accept` from the command line: a failing node gives exit code 4, names the rule, the
# row and the node; the JUnit file validates against tests/data/junit.xsd (xmllint, Debian's
# libxml2-utils); the 2 x H200 example rules pass on the baseline they were written from.
# Usage: accept_junit.sh CCBENCH SOURCE_DIR WORK_DIR
set -u
ccbench=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
command -v xmllint >/dev/null || fail "xmllint is missing (Debian package libxml2-utils; scripts/setup.sh installs it)"

"$ccbench" accept --rules "$src/tests/data/accept/cpu.yaml" "$src/tests/data/accept/slow-node" \
  --junit "$work/fail.xml" >"$work/fail.txt" 2>&1
rc=$?
cat "$work/fail.txt"
[ $rc = 4 ] || fail "exit code $rc, expected 4"
grep -q "rule 'shm ring bandwidth at 1 MiB' (.*cpu.yaml:3): FAIL (2 measured rows selected)" "$work/fail.txt" || fail "rule verdict"
grep -q "size 1 MiB: 3.38 GB/s < 5" "$work/fail.txt" || fail "the slow row is not named"
grep -q "FAIL node02: 1 of 1 rows broke a rule" "$work/fail.txt" || fail "node verdict"
grep -q "PASS node01: 0 of 2 rows broke a rule" "$work/fail.txt" || fail "node verdict"
grep -q "N/A  max_temperature_c 80 C" "$work/fail.txt" || fail "telemetry not reported as not available"
xmllint --noout --schema "$src/tests/data/junit.xsd" "$work/fail.xml" || fail "JUnit does not validate"
grep -q '<failure message="1 row broke it" type="threshold">' "$work/fail.xml" || fail "JUnit failure element"

"$ccbench" accept --rules "$src/docs/examples/rules/h200x2.yaml" \
  "$src/tests/fixtures/h200x2-20261130-sweep-cc01c2c" --junit "$work/pass.xml" >"$work/pass.txt" 2>&1
rc=$?
tail -12 "$work/pass.txt"
[ $rc = 0 ] || fail "the H200 rules fail on their own baseline (exit $rc)"
grep -q "# Acceptance: N/A (0 of 8 rules failed, 2 not judged in full: see N/A above)" "$work/pass.txt" || fail "overall verdict"
xmllint --noout --schema "$src/tests/data/junit.xsd" "$work/pass.xml" || fail "JUnit does not validate"

# Bad rule files: exit 2 with file and line; --min-busbw alone.
printf 'rules:\n  - require: {min_bw: 3}\n' >"$work/bad.yaml"
"$ccbench" accept --rules "$work/bad.yaml" "$src/tests/data/accept/slow-node" >"$work/bad.txt" 2>&1
rc=$?
cat "$work/bad.txt"
[ $rc = 2 ] || fail "bad rules: exit $rc, expected 2"
grep -q "bad.yaml:2:15: unknown key 'min_bw' in 'require'" "$work/bad.txt" || fail "bad rules message"
"$ccbench" accept --min-busbw 9 "$src/tests/data/accept/slow-node" >"$work/min.txt" 2>&1
rc=$?
[ $rc = 4 ] || fail "--min-busbw 9: exit $rc, expected 4"
grep -q "size 1 MiB: 3.38 GB/s < 9" "$work/min.txt" || fail "--min-busbw row"
echo "accept_junit: all checks passed"
