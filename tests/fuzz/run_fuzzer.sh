#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time, starting from its seed corpus, and fails on a
# crash, a sanitizer report, a violated property, a slow input or running out of memory.
# Usage: run_fuzzer.sh FUZZER SECONDS SEED_DIR WORK_DIR
# Prints "fuzz NAME: Done N runs in T second(s)"; on failure, the tail of the log and the input
# that failed (kept under WORK_DIR/artifacts/).
set -uo pipefail
fuzzer="$1"; seconds="$2"; seeds="$3"; work="$4"
name="$(basename "$fuzzer")"
mkdir -p "$work/corpus" "$work/artifacts"
log="$work/fuzz.log"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds" >"$log" 2>&1
rc=$?
runs="$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log" | tail -1)"
if [ "$rc" -ne 0 ] || [ -z "$runs" ]; then
  echo "FAIL fuzz $name: exit code $rc"
  tail -40 "$log"
  for f in "$work"/artifacts/*; do
    [ -f "$f" ] && { echo "input $f:"; od -c "$f" | head -20; }
  done
  exit 1
fi
echo "fuzz $name: $runs"
