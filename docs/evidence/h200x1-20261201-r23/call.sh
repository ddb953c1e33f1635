#!/usr/bin/env bash
# One H200: build ccbench, run the one-GPU tier (scripts/gpu-test.sh gpu1), then plant one wrong
# byte in the GPU ring's final reduce step and show that a one-GPU test fails on it.
set -uo pipefail
phase=${1:-tier}   # tier: build and run the tier; mutant: the planted fault (after tier, same machine)
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
if [ "$phase" = tier ]; then
nvidia-smi -L; nproc
for h in csv.h sqlite3.h nccl.h CLI/CLI.hpp yaml-cpp/yaml.h benchmark/benchmark.h gtest/gtest.h hwloc.h infiniband/verbs.h rdma/fabric.h fmt/format.h nlohmann/json.hpp; do
  f=$(ls /usr/include/$h /usr/local/cuda/include/$h 2>/dev/null | head -1); echo "header $h: ${f:-MISSING}"; done
mkdir -p /opt/deps
for d in .deps/libcsv*.deb; do dpkg -x $d /opt/deps; done
[ -f /usr/include/sqlite3.h ] || for d in .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
  -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
grep -E "^-- ccbench" $o/configure.log
cmake --build build -j 16 --target ccbench ccbench_unit_tests > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
echo "build done $(el)"; build/ccbench --version | head -12
(cd build && ./tests/ccbench_unit_tests --gtest_brief=1 2>&1 | tail -3)
timeout 420 scripts/gpu-test.sh gpu1 > $o/gpu1.log 2>&1; echo "gpu1 rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1.log
exit 0
fi
# The planted fault: one byte of the ring's recv_reduce_copy_send output flipped on every rank.
cp collectives/gpu/fifo_kernels.cu /tmp/fifo_kernels.cu.orig
sed -i 's|reduce_copy<T, 2, 2>(rop, true, p.avg_divisor, {rslot, in}, {out, sslot}, n);|&\n      if (threadIdx.x == 0 \&\& blockIdx.x == 0 \&\& n) reinterpret_cast<unsigned char*>(out)[0] ^= 1;|' collectives/gpu/fifo_kernels.cu
diff /tmp/fifo_kernels.cu.orig collectives/gpu/fifo_kernels.cu
cmake --build build -j 16 --target ccbench > $o/build-mutant.log 2>&1 || { grep -E "error|FAILED" $o/build-mutant.log | head; }
(cd build && timeout 200 ctest -R '^gpu1_dtypes_ops_2$' --output-on-failure) > $o/mutant.log 2>&1; echo "mutant ctest rc $? (non-zero expected) $(el)"
grep -E "wrong|FAIL|Failed|Passed|measured_check" $o/mutant.log | head -12
cp /tmp/fifo_kernels.cu.orig collectives/gpu/fifo_kernels.cu
