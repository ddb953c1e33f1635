#!/usr/bin/env bash
# One H200: the data loop's shifted path (pointers misaligned differently), the 16-rank mesh test
# and the one-GPU tier with the narrow floats' min/max merged. Phase a: build, the offsets test,
# the data-loop bench, the kernel tests of the tier; phase b: the rest of the tier.
# Usage: call.sh a|b
set -uo pipefail
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
kernels="p2p_every|dtypes|three_ranks|tree_four|host_2|graphs|misaligned|oneshot_sequence|mesh_peers|reduce_copy_offsets|fp8_2|fp8_three"
if [ "${1:-a}" = a ]; then
  mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
  [ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
    -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
  cmake --build build -j 16 --target ccbench ccbench_oneshot_sequence ccbench_reduce_copy_bench ccbench_reduce_copy_offsets \
    ccbench_mesh_peers > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
  echo "build done $(el)"
  timeout 120 build/tests/ccbench_reduce_copy_offsets > $o/offsets.log 2>&1; echo "offsets rc $? $(el)"; cat $o/offsets.log
  timeout 120 build/tests/ccbench_reduce_copy_bench > $o/reduce_copy.log 2>&1; echo "bench rc $? $(el)"; cat $o/reduce_copy.log
  timeout $(( 560 - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 -R "$kernels" > $o/gpu1-a.log 2>&1; echo "gpu1 a rc $? $(el)"
  grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1-a.log
else
  timeout 560 scripts/gpu-test.sh gpu1 -E "$kernels" > $o/gpu1-b.log 2>&1; echo "gpu1 b rc $? $(el)"
  grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1-b.log
fi
echo "done $(el)"
