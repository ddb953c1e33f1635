#!/usr/bin/env bash
# Runs one GPU test: ccbench under mpirun with one rank per GPU (or more with --share-gpus).
# Exits 77 (ctest: skipped) with the reason printed when this machine cannot run it.
# CCBENCH_ONE_GPU=1 (the one-GPU tier, label gpu1): every rank on the first GPU
# (CUDA_VISIBLE_DEVICES), sharing it (--share-gpus), whatever the machine has.
# The results go to a temporary folder and tests/check_results.py decides the test: exit code 0,
# every row ok (or skipped with a reason) with its wrong count, run.json and the footer agreeing
# with the rows, the case set the arguments ask for, busbw against the bus factor. CHECK_ARGS
# (environment) adds options of check_results.py (e.g. "--exit-code 3 --no-results": a run refused
# at start-up); CCBENCH_EXPECT_OUTPUT, a regular expression the output must match. With
# CCBENCH_RESULT_CHECK="SCRIPT [SCRIPT...]", `python3 SCRIPT results.csv` must then pass as well,
# for each script.
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
# CCBENCH_NEEDS_RDMA=1: the test moves data over RDMA verbs (label rdma).
if [ -n "${CCBENCH_NEEDS_RDMA:-}" ] && [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
  echo "SKIPPED: no RDMA device on this machine (/sys/class/infiniband is empty or missing)"; exit 77
fi
# CCBENCH_NEEDS_LIBFABRIC=1: the test moves data over libfabric (label ofi).
if [ -n "${CCBENCH_NEEDS_LIBFABRIC:-}" ] && ! "$ccbench" --version | grep -q "libfabric built in"; then
  echo "SKIPPED: this ccbench was built without libfabric (install libfabric-dev)"; exit 77
fi
extra=()
if [ "${CCBENCH_ONE_GPU:-0}" = 1 ]; then
  first=$(nvidia-smi --query-gpu=index --format=csv,noheader | head -1)
  export CUDA_VISIBLE_DEVICES="$first"
  [ "$ranks" -gt 1 ] && extra=(--share-gpus)
elif [ "$ranks" -gt "$gpus" ]; then
  if [ "$gpus" -lt 2 ] && [ "$ranks" -gt 1 ]; then
    echo "SKIPPED: needs 2 GPUs for $ranks ranks, this machine has $gpus"; exit 77
  fi
  extra=(--share-gpus)
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export NCCL_NVLS_ENABLE=0
# The kernels' tuning knobs and the other settings a test sets, passed on to every rank.
forward=(-x NCCL_NVLS_ENABLE)
[ -n "${CUDA_VISIBLE_DEVICES:-}" ] && forward+=(-x CUDA_VISIBLE_DEVICES)
for v in CCBENCH_NCCL_LIBRARY CCBENCH_GPU_SLOT_BYTES CCBENCH_GPU_CHANNELS CCBENCH_GPU_TREE_CHANNELS CCBENCH_GPU_HOST_RECV CCBENCH_GPU_HOST_SEND CCBENCH_GPU_HOST_CE_MIN_BYTES; do
  if [ -n "${!v:-}" ]; then forward+=(-x "$v"); fi
done
expect=()
[ -n "${CCBENCH_EXPECT_OUTPUT:-}" ] && expect=(--expect-output "$CCBENCH_EXPECT_OUTPUT")
# CHECK_ARGS is split on spaces on purpose: it holds options such as "--unchecked all".
# shellcheck disable=SC2086
python3 "$(dirname "$0")/../check_results.py" --dir "$out" ${CHECK_ARGS:-} ${expect[@]+"${expect[@]}"} -- \
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" "${forward[@]}" "$ccbench" --device gpu --out "$out" "${extra[@]}" "$@" || exit 1
for check in ${CCBENCH_RESULT_CHECK:-}; do
  python3 "$check" "$out/results.csv" || exit 1
done
