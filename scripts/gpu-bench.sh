#!/usr/bin/env bash
# Builds ccbench, runs the GPU tests and the GPU benchmarks in one go on a GPU node, keeping the
# full logs and CSV files in OUTDIR.
# Usage: scripts/gpu-bench.sh OUTDIR [tests|bench|all] [extra ccbench arguments for the bench]
# Debian packages missing on the node can be put as .deb files in .deps/ (unpacked into
# /opt/ccbench-deps, never into /).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: scripts/gpu-bench.sh OUTDIR [tests|bench|all]}"
what="${2:-all}"
shift 2 2>/dev/null || shift $#
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cmake_args=()
if ls .deps/*.deb >/dev/null 2>&1; then
  for f in .deps/*.deb; do dpkg -x "$f" /opt/ccbench-deps; done
  cmake_args+=(-DCMAKE_PREFIX_PATH=/opt/ccbench-deps/usr "-DCMAKE_CXX_FLAGS=-I/opt/ccbench-deps/usr/include")
  export LD_LIBRARY_PATH="/opt/ccbench-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
build="${CCBENCH_BUILD_DIR:-build}"
{
  date -u
  nvidia-smi
  nvidia-smi topo -m
} >"$out/machine.txt" 2>&1
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 3; }
fi
cmake --build "$build" -j "$(nproc)" >>"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 3; }
"$build/ccbench" --version | tee "$out/version.txt"
ngpu=$(nvidia-smi -L | grep -c '^GPU')
mpi=(mpirun --bind-to none -np "$ngpu" -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH)

if [ "$what" = tests ] || [ "$what" = all ]; then
  CCBENCH_BUILD_DIR="$build" scripts/gpu-test.sh gpu >"$out/gpu-tests.log" 2>&1
  echo "gpu tests: exit $?"; grep -E "^gpu tests|^  skipped|\*\*\*Failed|\*\*\*Timeout" "$out/gpu-tests.log" | head -40
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  "${mpi[@]}" "$build/ccbench" --device gpu --out "$out/bench" "$@" >"$out/bench.log" 2>&1
  echo "bench: exit $?"
  grep -A200 "busbw from the median" "$out/bench.log" | head -150
fi
