#!/usr/bin/env bash
# One H200: build, the one-GPU tier with the training conditions (fp8, --overlap, --energy,
# --nccl-config) and the libfabric and damaged-value work merged, then the kernels' data loop on
# aligned and misaligned int8/half buffers (tests/gpu/reduce_copy_bench.cu).
set -uo pipefail
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
  -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
cmake --build build -j 16 --target ccbench ccbench_oneshot_sequence ccbench_reduce_copy_bench > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
echo "build done $(el)"
timeout 120 build/tests/ccbench_reduce_copy_bench > $o/reduce_copy.log 2>&1; echo "reduce_copy bench rc $? $(el)"; cat $o/reduce_copy.log
timeout 400 scripts/gpu-test.sh gpu1 > $o/gpu1.log 2>&1; echo "gpu1 rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1.log
echo "done $(el)"
