#!/usr/bin/env bash
# One H200: build everything (the micro-benchmarks too, Google Benchmark from .deps), then
#   call.sh a   the one-GPU tier but the overlap, energy and teardown tests;
#   call.sh c   the fp8 loop tests and the CPU reduce micro-benchmark on this host's processor.
set -uo pipefail
phase=${1:-a}
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
mkdir -p /opt/deps; for d in .deps/*.deb; do dpkg -x $d /opt/deps; done
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
  -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
cmake --build build -j 16 > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
echo "build done $(el)"
if [ "$phase" = a ]; then
  timeout $(( ${LIMIT:-585} - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 -E 'gpu1_(overlap|energy|teardown)' > $o/tier-a.log 2>&1
  echo "tier a rc $? $(el)"
  grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)|FAIL" $o/tier-a.log | head -80
else
  lscpu | grep -E "Model name|Flags" | sed 's/^Flags:.*/&\n/' | tr ' ' '\n' | grep -E "Model|name|avx512|gfni|^$" | tr '\n' ' ' > $o/cpu.txt; echo; cat $o/cpu.txt; echo
  build/tests/ccbench_unit_tests --gtest_filter='Fp8*' > $o/fp8-tests.log 2>&1; echo "fp8 tests rc $? $(el)"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" $o/fp8-tests.log | head
  REPS=${REPS:-5} FILTER='BM_ReduceOp<' timeout $(( ${LIMIT:-585} - 10 - ($(date +%s)-S) )) \
    scripts/narrow-reduce-bench.sh $o/fp8 > $o/fp8-bench.txt 2>&1; echo "bench rc $? $(el)"
  cat $o/fp8-bench.txt
fi
echo "done $(el)"
