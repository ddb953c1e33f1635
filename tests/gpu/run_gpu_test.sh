#!/usr/bin/env bash
# Runs one GPU test: ccbench under mpirun with one rank per GPU (or more with --share-gpus).
# Exits 77 (ctest: skipped) with the reason printed when this machine cannot run it.
# With CCBENCH_RESULT_CHECK=SCRIPT, the results are written to a temporary folder and, when
# ccbench succeeded, `python3 SCRIPT results.csv` decides the test.
# Usage: run_gpu_test.sh CCBENCH RANKS [ccbench arguments...]
set -uo pipefail
ccbench="$1"; ranks="$2"; shift 2
if ! "$ccbench" --version | grep -q "CUDA     built in"; then
  echo "SKIPPED: this ccbench was built without CUDA"; exit 77
fi
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$gpus" -eq 0 ]; then
  echo "SKIPPED: no GPU on this machine (nvidia-smi lists none)"; exit 77
fi
extra=()
if [ "$ranks" -gt "$gpus" ]; then
  if [ "$gpus" -lt 2 ] && [ "$ranks" -gt 1 ]; then
    echo "SKIPPED: needs 2 GPUs for $ranks ranks, this machine has $gpus"; exit 77
  fi
  extra=(--share-gpus)
fi
out=none
if [ -n "${CCBENCH_RESULT_CHECK:-}" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
export NCCL_NVLS_ENABLE=0
mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" -x NCCL_NVLS_ENABLE \
  "$ccbench" --device gpu --out "$out" "${extra[@]}" "$@"
rc=$?
if [ "$rc" -ne 0 ] || [ "$out" = none ]; then exit "$rc"; fi
python3 "$CCBENCH_RESULT_CHECK" "$out/results.csv"
