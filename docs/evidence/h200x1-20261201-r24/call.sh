#!/usr/bin/env bash
# One H200: build, the one-GPU tier (agreement, grids, one-shot sequence, lazy mapping), then the
# one-shot sequence test against the one-shot of 1de3678 (expected to fail: stale LL lines).
set -uo pipefail
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
[ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
  -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
cmake --build build -j 16 --target ccbench ccbench_oneshot_sequence > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
echo "build done $(el)"
timeout 380 scripts/gpu-test.sh gpu1 > $o/gpu1.log 2>&1; echo "gpu1 rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1.log
grep -E "oneshot sequence:|agreement CCBENCH" $o/gpu1.log
mkdir -p /tmp/new; for f in calls/old-oneshot/*; do b=$(basename $f); p=$(ls collectives/gpu/$b); cp $p /tmp/new/$b; cp $f $p; done
cmake --build build -j 16 --target ccbench_oneshot_sequence > $o/build-old.log 2>&1 || grep -E "error" $o/build-old.log | head
timeout 60 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x CUDA_VISIBLE_DEVICES=0 build/ccbench_oneshot_sequence > $o/old-oneshot.log 2>&1
echo "old one-shot sequence rc $? (non-zero expected) $(el)"; head -8 $o/old-oneshot.log; grep "oneshot sequence" $o/old-oneshot.log
for f in /tmp/new/*; do cp $f collectives/gpu/$(basename $f); done
