#!/usr/bin/env bash
# Runs ccbench on GPU ranks with an injected fault (CCBENCH_FAULT) and checks the outcome: the
# exit code and a text the output must contain. Exits 77 (skipped, reason printed) without GPUs.
# Usage: run_gpu_fault_test.sh CCBENCH RANKS FAULT EXPECTED_RC EXPECTED_TEXT [ccbench arguments...]
# EXPECTED_TEXT may hold several texts separated by "&&", all required. CCBENCH_ONE_GPU=1: every rank
# on the first GPU, sharing it. CCBENCH_MAX_SECONDS: the run must end within that many seconds.
set -uo pipefail
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
export NCCL_NVLS_ENABLE=0 CCBENCH_FAULT="$fault"
start=$SECONDS
out=$(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" -x NCCL_NVLS_ENABLE -x CCBENCH_FAULT \
  "${mpi_share[@]}" "$ccbench" --device gpu --out none "${ccb_share[@]}" "$@" 2>&1)
rc=$?
echo "$out" | grep -E "ccbench|wrong|Result" | head -20
echo "fault '$fault': exit code $rc (expected $want_rc) after $((SECONDS - start)) s"
[ "$rc" -eq "$want_rc" ] || { echo "FAIL: exit code $rc, expected $want_rc"; exit 1; }
if [ -n "${CCBENCH_MAX_SECONDS:-}" ] && [ $((SECONDS - start)) -gt "$CCBENCH_MAX_SECONDS" ]; then
  echo "FAIL: ended after $((SECONDS - start)) s, bound ${CCBENCH_MAX_SECONDS} s"; exit 1
fi
IFS=$'\n' read -r -d '' -a texts < <(printf '%s' "$want_text" | sed 's/&&/\n/g'; printf '\0')
for text in "${texts[@]}"; do
  echo "$out" | grep -qF -- "$text" || { echo "FAIL: output lacks '$text'"; exit 1; }
done
echo "PASS"
