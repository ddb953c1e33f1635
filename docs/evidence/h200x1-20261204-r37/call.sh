#!/usr/bin/env bash
# One H200: build everything, then the one-GPU tier in two calls (a: all but the overlap, energy
# and teardown tests; b: those, then scripts/overlap-figures.sh in the time left) — `call.sh a|b`.
set -uo pipefail
phase=${1:-a}
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
  -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
cmake --build build -j 16 > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
echo "build done $(el)"
slow='gpu1_(overlap|energy|teardown)'
if [ "$phase" = a ]; then sel=(-E "$slow"); else sel=(-R "$slow"); fi
timeout $(( ${LIMIT:-585} - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 "${sel[@]}" > $o/tier-$phase.log 2>&1; echo "tier $phase rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)|FAIL" $o/tier-$phase.log | head -80
if [ "$phase" = b ]; then
  left=$(( ${LIMIT:-585} - 5 - ($(date +%s)-S) ))
  [ $left -gt 60 ] && timeout $left scripts/overlap-figures.sh $o/figures > $o/figures.log 2>&1; echo "figures rc $? $(el)"
  cat $o/figures/figures.md 2>/dev/null
fi
echo "done $(el)"
