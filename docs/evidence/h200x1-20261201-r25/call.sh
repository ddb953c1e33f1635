#!/usr/bin/env bash
# One H200: build, then the one-GPU tier (scripts/gpu-test.sh gpu1) on the tree with the option
# layer, one writer per results folder and the end-to-end checks merged; then --groups pairs and
# links on GPU ranks sharing the GPU (link names, accept per link).
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
timeout 400 scripts/gpu-test.sh gpu1 > $o/gpu1.log 2>&1; echo "gpu1 rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1.log
cd /tmp && B=$OLDPWD/build/ccbench
timeout 60 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 $B links --device gpu -b 1M -e 4M -n 5 --out /tmp/gl > $o/links.log 2>&1; echo "links rc $?"
timeout 90 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3 $B --device gpu --share-gpus --collective allreduce --impl ring -b 64K -e 1M -f 4 -n 5 -w 1 --groups pairs --out /tmp/gp --quiet > $o/pairs.log 2>&1; echo "pairs rc $?"
$B accept --min-busbw 0.001 /tmp/gl /tmp/gp > $o/accept.txt 2>&1; echo "accept rc $?"; sed -n '/per link/,$p' $o/accept.txt
cut -d, -f1-3,9,26,31-33 /tmp/gl/links.csv | head -4 > $o/links-head.csv; cat $o/links-head.csv
echo "done $(el)"
