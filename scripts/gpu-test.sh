#!/usr/bin/env bash
# The GPU tests' entry point: runs `ctest -L LABEL` (gpu: the one-GPU tier and the 2-GPU tests;
# gpu1: the one-GPU tier alone) in the build folder and says how many tests ran, passed, failed
# and were skipped, with each skip reason. Skipped is not passed: on a machine where nvidia-smi
# lists a GPU, a run in which no GPU test ran fails.
# Usage: scripts/gpu-test.sh [gpu|gpu1] [extra ctest arguments]
# Environment: CCBENCH_BUILD_DIR (default build).
set -uo pipefail
cd "$(dirname "$0")/.."
label="${1:-gpu}"
shift $(( $# > 0 ? 1 : 0 ))
build="${CCBENCH_BUILD_DIR:-build}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
(cd "$build" && ctest -L "$label" --output-on-failure "$@") 2>&1 | tee "$log"
passed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* +Passed' "$log")
failed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*(Failed|Timeout|Exception)|Not Run' "$log")
skipped=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$log")
ran=$((passed + failed))
echo "gpu tests ($label): $ran ran ($passed passed, $failed failed), $skipped skipped"
grep -h '^SKIPPED:' "$build/Testing/Temporary/LastTest.log" 2>/dev/null | sort | uniq -c |
  sed 's/^ *\([0-9]*\) SKIPPED: /  skipped \1: /'
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$gpus" -gt 0 ] && [ "$ran" -eq 0 ]; then
  echo "gpu tests ($label): FAILED: this machine has $gpus GPU(s) and no GPU test ran" >&2
  exit 1
fi
[ "$failed" -eq 0 ]
