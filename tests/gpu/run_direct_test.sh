#!/usr/bin/env bash
# Runs a GPU test program that drives our implementations directly (tree_peers.cpp, teardown.cpp)
# under mpirun, every rank on the first GPU (the one-GPU tier), and decides it by its exit code and
# its verdict line together: exit 0 and a line matching OK_REGEX. Exits 77 (ctest: skipped) with
# the reason where this machine has no GPU.
# With --sanitizer DIR, each rank runs under compute-sanitizer's memcheck where the machine has
# it (on PATH, else in DIR, the CUDA toolkit's bin folder): it then also needs every rank's
# "ERROR SUMMARY: 0 errors". Where it has none, the test runs without it and says so first.
# Usage: run_direct_test.sh [--sanitizer DIR] OK_REGEX MPIEXEC RANKS PROGRAM [ARGS...]
set -uo pipefail
sanitizer_dir=""
if [ "${1:-}" = --sanitizer ]; then sanitizer_dir="$2"; shift 2; fi
ok_regex="$1"; mpiexec="$2"; ranks="$3"; shift 3
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$gpus" -eq 0 ]; then
  echo "SKIPPED: no GPU on this machine (nvidia-smi lists none)"; exit 77
fi
first=$(nvidia-smi --query-gpu=index --format=csv,noheader | head -1)
wrap=()
if [ -n "$sanitizer_dir" ]; then
  tool=$(command -v compute-sanitizer || true)
  [ -z "$tool" ] && [ -x "$sanitizer_dir/compute-sanitizer" ] && tool="$sanitizer_dir/compute-sanitizer"
  if [ -n "$tool" ]; then
    echo "compute-sanitizer: $tool (memcheck) on every rank"
    wrap=("$tool" --tool memcheck --error-exitcode 86 --print-limit 20)
  else
    echo "compute-sanitizer: not found (PATH, $sanitizer_dir): running without it"
  fi
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "\$ mpirun -np $ranks ${wrap[*]} $*"
"$mpiexec" --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" -x CUDA_VISIBLE_DEVICES="$first" \
  ${CCBENCH_DIRECT_TEST_ENV:-} "${wrap[@]}" "$@" >"$log" 2>&1
rc=$?
cat "$log"
if [ "$rc" -eq 77 ] && grep -q '^SKIPPED: ' "$log"; then exit 77; fi
failed=0
if [ "$rc" -ne 0 ]; then echo "FAIL: exit code $rc"; failed=1; fi
if ! grep -Eq "$ok_regex" "$log"; then echo "FAIL: no line matches '$ok_regex'"; failed=1; fi
if [ ${#wrap[@]} -gt 0 ]; then
  clean=$(grep -c 'ERROR SUMMARY: 0 errors' "$log" || true)
  if [ "$clean" -ne "$ranks" ]; then
    echo "FAIL: compute-sanitizer reported 0 errors for $clean of $ranks ranks"; failed=1
  fi
fi
exit "$failed"
