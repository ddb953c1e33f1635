#!/usr/bin/env bash
# Sets ccbench up (scripts/setup.sh) and runs the default benchmark on this machine: one MPI
# rank per local GPU, or 4 CPU ranks where there is no GPU. Extra arguments go to ccbench,
# e.g. scripts/run.sh --collective allreduce -e 256M
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build="${CCBENCH_BUILD_DIR:-build}"

gpus=0
if command -v nvidia-smi >/dev/null && "$build/ccbench" --version | grep -q "CUDA     built in"; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
args=(--bind-to none)
if [ "$gpus" -gt 0 ]; then
  np=$gpus
else
  np=${CCBENCH_CPU_RANKS:-4}
  args+=(--oversubscribe)
fi
[ "$(id -u)" = 0 ] && args+=(--allow-run-as-root)
# NVLink SHARP stays off unless asked for (ccbench never enables it itself).
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}"
echo "ccbench: mpirun -np $np $build/ccbench $*"
exec mpirun -np "$np" "${args[@]}" -x NCCL_NVLS_ENABLE "$build/ccbench" "$@"
