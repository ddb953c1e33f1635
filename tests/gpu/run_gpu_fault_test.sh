#!/usr/bin/env bash
# Runs ccbench on GPU ranks with an injected fault (CCBENCH_FAULT) and checks the outcome: the
# exit code, a text the output must contain, and the job's time against the bound
# docs/reliability.md states. Exits 77 (skipped, reason printed) without GPUs.
# Usage: run_gpu_fault_test.sh CCBENCH RANKS FAULT EXPECTED_RC EXPECTED_TEXT [ccbench arguments...]
# EXPECTED_TEXT may hold several texts separated by "&&", all required. CCBENCH_ONE_GPU=1: every rank
# on the first GPU, sharing it.
# The bound: a stuck job (exit code 5) ends within 2 x --timeout + 4 s, and must have waited the
# deadline out; any other fault ends the job without waiting on a deadline, within the start-up
# plus NO_HANG_RUN_S. STARTUP_S covers mpirun, CUDA contexts and NCCL's set-up (the stuck NCCL job
# took 9.4 s with --timeout 5 on 2 x H200, h200x2-20261130-gpu-tests-d89ed10; corrupt and overrun
# jobs 2-4 s there and on one H200, h200x1-20261201-r24).
set -uo pipefail
STARTUP_S=10
NO_HANG_RUN_S=10
ccbench="$1"; ranks="$2"; fault="$3"; want_rc="$4"; want_text="$5"; shift 5
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if ! "$ccbench" --version | grep -q "CUDA     built in"; then echo "SKIPPED: this ccbench was built without CUDA"; exit 77; fi
mpi_share=() ccb_share=()
if [ "${CCBENCH_ONE_GPU:-0}" = 1 ] && [ "$gpus" -ge 1 ]; then
  export CUDA_VISIBLE_DEVICES="$(nvidia-smi --query-gpu=index --format=csv,noheader | head -1)"
  mpi_share=(-x CUDA_VISIBLE_DEVICES) ccb_share=(--share-gpus)
elif [ "$gpus" -eq 0 ]; then
  echo "SKIPPED: no GPU on this machine (nvidia-smi lists none)"; exit 77
elif [ "$gpus" -lt "$ranks" ]; then
  echo "SKIPPED: needs $ranks GPUs, this machine has $gpus"; exit 77
fi
deadline=""
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; i++)); do
  if [ "${args[i]}" = "--timeout" ]; then deadline="${args[i+1]}"; fi
done
if [ "$want_rc" -eq 5 ]; then
  [ -n "$deadline" ] || { echo "FAIL: a test of a stuck job must give --timeout (its bound follows from it)"; exit 1; }
  bound=$((2 * deadline + 4 + STARTUP_S))
else
  bound=$((STARTUP_S + NO_HANG_RUN_S))
fi
export NCCL_NVLS_ENABLE=0 CCBENCH_FAULT="$fault"
start=$SECONDS
out=$(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" -x NCCL_NVLS_ENABLE -x CCBENCH_FAULT \
  "${mpi_share[@]}" "$ccbench" --device gpu --out none "${ccb_share[@]}" "$@" 2>&1)
rc=$?
elapsed=$((SECONDS - start))
echo "$out" | grep -E "ccbench|wrong|Result" | head -20
echo "fault '$fault': exit code $rc (expected $want_rc) after $elapsed s (bound $bound s)"
[ "$rc" -eq "$want_rc" ] || { echo "FAIL: exit code $rc, expected $want_rc"; exit 1; }
if [ "$elapsed" -gt "$bound" ]; then
  echo "FAIL: ended after $elapsed s, bound $bound s"; exit 1
fi
if [ "$want_rc" -eq 5 ] && [ "$elapsed" -lt "$deadline" ]; then
  echo "FAIL: ended after $elapsed s, before its $deadline s deadline could expire"; exit 1
fi
IFS=$'\n' read -r -d '' -a texts < <(printf '%s' "$want_text" | sed 's/&&/\n/g'; printf '\0')
for text in "${texts[@]}"; do
  echo "$out" | grep -qF -- "$text" || { echo "FAIL: output lacks '$text'"; exit 1; }
done
echo "PASS"
