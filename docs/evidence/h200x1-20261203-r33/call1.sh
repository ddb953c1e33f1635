#!/usr/bin/env bash
# One H200: build the merged tree, then the GPU tests new since the last tier run (precision and
# known-answer timing, tree peers, teardown, one-shot sequence, overlap and energy).
set -uo pipefail
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
nproc; grep -o 'avx512_fp16' /proc/cpuinfo | head -1; command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
  -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
cmake --build build -j 16 --target ccbench ccbench_oneshot_sequence ccbench_reduce_copy_offsets ccbench_mesh_peers \
  ccbench_overlap_load ccbench_teardown ccbench_tree_peers > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
echo "build done $(el)"
timeout $(( 580 - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 -R 'gpu1_(tree_peers_8|teardown_1000|oneshot_sequence|mesh_peers_16|precision|known_time|overlap|energy)' > $o/new.log 2>&1; echo "new rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/new.log
echo "done $(el)"
