#!/usr/bin/env bash
# One H200: build the merged tree with the Bruck fix, the teardown test, then the rest of the
# one-GPU tier (the 16 tests that passed in call1 are left out to fit the call).
set -uo pipefail
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
  -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
cmake --build build -j 16 --target ccbench ccbench_oneshot_sequence ccbench_reduce_copy_offsets ccbench_mesh_peers \
  ccbench_overlap_load ccbench_teardown ccbench_tree_peers > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
echo "build done $(el)"
scripts/gpu-test.sh gpu1 -R 'gpu1_teardown_1000' > $o/teardown.log 2>&1; echo "teardown rc $? $(el)"
grep -E "^gpu tests|teardown:|cycle|Test +#" $o/teardown.log | head -20
timeout $(( 590 - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 -E 'gpu1_(tree_peers_8|teardown_1000|oneshot_sequence|mesh_peers_16|precision|known_time|overlap|energy)' > $o/rest.log 2>&1; echo "rest rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/rest.log
echo "done $(el)"
