#!/usr/bin/env bash
# One H200: build the tree (unity build) with the benchmarks, the overlap/energy figures
# (scripts/overlap-figures.sh), then the one-GPU tier's overlap and energy tests.
set -uo pipefail
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
nproc; grep -o 'avx512_fp16' /proc/cpuinfo | head -1
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
  -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
grep -E "^-- ccbench" $o/configure.log
cmake --build build -j 16 --target ccbench ccbench_microbench ccbench_oneshot_sequence ccbench_reduce_copy_offsets \
  ccbench_mesh_peers ccbench_overlap_load ccbench_teardown ccbench_tree_peers > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
echo "build done $(el)"
scripts/overlap-figures.sh $o/overlap-figures > $o/overlap-figures.log 2>&1; echo "overlap-figures rc $? $(el)"
cat $o/overlap-figures.log | tail -20
timeout $(( 590 - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 -R 'gpu1_(overlap|energy)' > $o/overlap-tests.log 2>&1; echo "overlap tests rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/overlap-tests.log
echo "done $(el)"
