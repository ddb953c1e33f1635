#!/usr/bin/env bash
# Runs ccbench on GPU ranks with an injected fault (CCBENCH_FAULT) and checks the outcome: the
# exit code and a text the output must contain. Exits 77 (skipped, reason printed) without GPUs.
# Usage: run_gpu_fault_test.sh CCBENCH RANKS FAULT EXPECTED_RC EXPECTED_TEXT [ccbench arguments...]
# EXPECTED_TEXT may hold several texts separated by "&&", all required.
set -uo pipefail
ccbench="$1"; ranks="$2"; fault="$3"; want_rc="$4"; want_text="$5"; shift 5
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if ! "$ccbench" --version | grep -q "CUDA     built in"; then echo "SKIPPED: this ccbench was built without CUDA"; exit 77; fi
if [ "$gpus" -lt "$ranks" ]; then echo "SKIPPED: needs $ranks GPUs, this machine has $gpus"; exit 77; fi
export NCCL_NVLS_ENABLE=0 CCBENCH_FAULT="$fault"
start=$SECONDS
out=$(mpirun --allow-run-as-root --bind-to none -np "$ranks" -x NCCL_NVLS_ENABLE -x CCBENCH_FAULT \
  "$ccbench" --device gpu --out none "$@" 2>&1)
rc=$?
echo "$out" | grep -E "ccbench|wrong|Result" | head -20
echo "fault '$fault': exit code $rc (expected $want_rc) after $((SECONDS - start)) s"
[ "$rc" -eq "$want_rc" ] || { echo "FAIL: exit code $rc, expected $want_rc"; exit 1; }
IFS=$'\n' read -r -d '' -a texts < <(printf '%s' "$want_text" | sed 's/&&/\n/g'; printf '\0')
for text in "${texts[@]}"; do
  echo "$out" | grep -qF -- "$text" || { echo "FAIL: output lacks '$text'"; exit 1; }
done
echo "PASS"
