#!/usr/bin/env bash
# One H200, the tree as merged: each kernel variant in its own file (fifo_ring.cu / fifo_ring_shift.cu,
# fifo_tree.cu / fifo_tree_shift.cu). Build, then the whole one-GPU tier in one run.
set -uo pipefail
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
  -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
cmake --build build -j 16 --target ccbench ccbench_oneshot_sequence ccbench_reduce_copy_bench ccbench_reduce_copy_offsets \
  ccbench_mesh_peers > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
grep -E "fifo_(ring|tree)" $o/build.log
echo "build done $(el)"
timeout $(( 585 - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 > $o/gpu1.log 2>&1; echo "gpu1 rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1.log
echo "done $(el)"
