#!/usr/bin/env bash
# One H200 (same tree): the fp8 CPU reduce loops against float on this host's processor
# (AVX-512 FP16), then the one-GPU tier's other tests on the unity build, as time allows.
set -uo pipefail
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
lscpu | grep -E "Model name|L3"
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
  -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
cmake --build build -j 16 > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
echo "build done $(el)"
REPS=5 FILTER='BM_ReduceOp<' timeout 240 scripts/narrow-reduce-bench.sh $o/fp8-ops > $o/fp8-ops.txt 2>&1; echo "narrow-reduce-bench rc $? $(el)"
cat $o/fp8-ops.txt
timeout $(( 585 - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 -E 'gpu1_(overlap|energy|teardown_1000)' > $o/tier.log 2>&1; echo "tier rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/tier.log
echo "done $(el)"
