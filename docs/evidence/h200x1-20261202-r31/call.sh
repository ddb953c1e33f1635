#!/usr/bin/env bash
# One H200: reduce_copy's shifted path in kernels launched only for misaligned buffers (kShift).
# Phase a: build, the offsets test (both loops), the kernel tests of the one-GPU tier;
# phase b: the rest of the tier, then the data-loop bench A/B: this tree's bench against the
# bench and device.cuh of main as they were before (tmp_old/: `git archive a15f6c6 collectives core`
# and tests/gpu/reduce_copy_bench.cu of a15f6c6 with the block count read from argv[1]), alternately.
# Usage: call.sh a|b
set -uo pipefail
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
kernels="p2p_every|dtypes|three_ranks|tree_four|host_2|graphs|misaligned|oneshot_sequence|mesh_peers|reduce_copy_offsets|fp8_2|fp8_three"
N="/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo"
if [ "${1:-a}" = a ]; then
  mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
  [ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
    -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
  cmake --build build -j 16 --target ccbench ccbench_oneshot_sequence ccbench_reduce_copy_bench ccbench_reduce_copy_offsets \
    ccbench_mesh_peers > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
  grep -E "fifo_(ring|tree)" $o/build.log | head -4
  echo "build done $(el)"
  $N -Itmp_old -I. -Ibuild/generated tmp_old/bench.cu -o /tmp/bench_old -lfmt > $o/bench-old-build.log 2>&1 &
  timeout 120 build/tests/ccbench_reduce_copy_offsets > $o/offsets.log 2>&1; echo "offsets rc $? $(el)"; cat $o/offsets.log
  timeout $(( 560 - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 -R "$kernels" > $o/gpu1-a.log 2>&1; echo "gpu1 a rc $? $(el)"
  grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1-a.log
  wait; cp /tmp/bench_old build/bench_old 2>/dev/null; tail -n 3 $o/bench-old-build.log
elif [ "${1:-a}" = b ]; then
  timeout 200 scripts/gpu-test.sh gpu1 -E "$kernels" > $o/gpu1-b.log 2>&1; echo "gpu1 b rc $? $(el)"
  grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1-b.log
  [ -x build/bench_old ] || $N -Itmp_old -I. -Ibuild/generated tmp_old/bench.cu -o build/bench_old -lfmt
  for blocks in 264 16; do for v in new old new old; do
    [ $v = new ] && b=build/tests/ccbench_reduce_copy_bench || b=build/bench_old
    echo "== $v $blocks blocks $(el)"; timeout 100 $b $blocks > $o/bench-$v-$blocks.log 2>&1; echo "rc $?"
    cat $o/bench-$v-$blocks.log >> $o/bench-all.log; grep -vE "^(int8|half|float) +equally" $o/bench-$v-$blocks.log
  done; done
fi
echo "done $(el)"
