#!/usr/bin/env bash
# One H200: the data loop's shifted path (pointers misaligned differently), the 16-rank mesh test
# and the one-GPU tier with the narrow floats' min/max merged. Phase a: build, the offsets test,
# the data-loop bench, the kernel tests of the tier; phase b: the rest of the tier.
# Usage: call.sh a|b
set -uo pipefail
o=${OUT:-/tmp/out}; mkdir -p $o; S=$(date +%s)
el() { echo "[$(( $(date +%s)-S ))s]"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCBENCH_GIT_HASH=${HASH:-unknown}
export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
kernels="p2p_every|dtypes|three_ranks|tree_four|host_2|graphs|misaligned|oneshot_sequence|mesh_peers|reduce_copy_offsets|fp8_2|fp8_three"
if [ "${1:-a}" = a ]; then
  mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
  [ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
    -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
  cmake --build build -j 16 --target ccbench ccbench_oneshot_sequence ccbench_reduce_copy_bench ccbench_reduce_copy_offsets \
    ccbench_mesh_peers > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
  echo "build done $(el)"
  timeout 120 build/tests/ccbench_reduce_copy_offsets > $o/offsets.log 2>&1; echo "offsets rc $? $(el)"; cat $o/offsets.log
  timeout 120 build/tests/ccbench_reduce_copy_bench > $o/reduce_copy.log 2>&1; echo "bench rc $? $(el)"; cat $o/reduce_copy.log
  timeout $(( 560 - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 -R "$kernels" > $o/gpu1-a.log 2>&1; echo "gpu1 a rc $? $(el)"
  grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1-a.log
elif [ "${1:-a}" = b ]; then
  timeout 560 scripts/gpu-test.sh gpu1 -E "$kernels" > $o/gpu1-b.log 2>&1; echo "gpu1 b rc $? $(el)"
  grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1-b.log
fi
echo "done $(el)"
# Phase c: the offsets test against two planted faults in the shifted path (a copy of the tree):
# the first lane's partial store dropped, and the run's last lane taking its second source pack
# from the shuffle instead of loading it. Each must fail.
if [ "${1:-a}" = c ]; then
  for m in 1 2; do
    rm -rf /tmp/plant$m && mkdir -p /tmp/plant$m && cp -r collectives core transports /tmp/plant$m/
    [ $m = 1 ] && sed -i '/if (lane == 0) store_part/d' /tmp/plant$m/collectives/gpu/device.cuh
    [ $m = 2 ] && sed -i 's/edge ? hi\[u\]\[s\] : next/next/' /tmp/plant$m/collectives/gpu/device.cuh
    diff -q collectives/gpu/device.cuh /tmp/plant$m/collectives/gpu/device.cuh >/dev/null && echo "plant $m: NOT PLANTED"
    /usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I/tmp/plant$m -Ibuild/generated \
      tests/gpu/reduce_copy_offsets.cu -o /tmp/plant$m/offsets > $o/plant$m-build.log 2>&1 &
  done; wait
  for m in 1 2; do timeout 120 /tmp/plant$m/offsets > $o/plant$m.log 2>&1; echo "plant $m rc $? $(el)"; tail -n 8 $o/plant$m.log; done
fi
# Phase d: the 16-rank mesh test against the old behaviour planted (every peer mapped, as before
# mapping became lazy): it must fail, then pass again with the tree restored.
if [ "${1:-a}" = d ]; then
  cp transports/gpu_mesh.cpp /tmp/gpu_mesh.cpp.orig
  sed -i 's|^void GpuFifoMesh::finish_mapping(Linked& l) {|&\n  for (int r = 0; l.region \&\& r < static_cast<int>(l.blobs.size()); ++r) if (r != rank_) map(l, r);|' transports/gpu_mesh.cpp
  grep -n -A2 "^void GpuFifoMesh::finish_mapping" transports/gpu_mesh.cpp
  cmake --build build -j 16 --target ccbench_mesh_peers > $o/plant-mesh-build.log 2>&1 || tail -n 20 $o/plant-mesh-build.log
  (cd build && ctest -R gpu1_mesh_peers_16 --output-on-failure) > $o/plant-mesh.log 2>&1; echo "planted mesh rc $? $(el)"
  grep -E "mapped the regions|mesh peers|Passed|Failed" $o/plant-mesh.log | head -n 6
  cp /tmp/gpu_mesh.cpp.orig transports/gpu_mesh.cpp
  cmake --build build -j 16 --target ccbench_mesh_peers > /dev/null 2>&1
  (cd build && ctest -R gpu1_mesh_peers_16 --output-on-failure) > $o/mesh-restored.log 2>&1; echo "restored mesh rc $? $(el)"
  grep -E "mesh peers|Passed|Failed" $o/mesh-restored.log | head -n 3
fi
# Phase e (on a fresh machine): build, then the four test programs again after they were moved onto
# one frame (tests/gpu/direct_rank.h, core's CUDA checks).
if [ "${1:-a}" = e ]; then
  mkdir -p /opt/deps; for d in .deps/libcsv*.deb .deps/libsqlite3*.deb; do dpkg -x $d /opt/deps; done
  [ -f build/CMakeCache.txt ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
    -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/configure.log 2>&1 || { tail -30 $o/configure.log; exit 1; }
  cmake --build build -j 16 --target ccbench ccbench_oneshot_sequence ccbench_reduce_copy_bench ccbench_reduce_copy_offsets \
    ccbench_mesh_peers > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
  echo "build done $(el)"
  timeout 300 scripts/gpu-test.sh gpu1 -R "oneshot_sequence|mesh_peers|reduce_copy_offsets" > $o/gpu1-e.log 2>&1; echo "gpu1 e rc $? $(el)"
  grep -E "^gpu tests|Test +#.*(Passed|Failed|Timeout|Skipped)" $o/gpu1-e.log
  timeout 120 build/tests/ccbench_reduce_copy_bench > $o/reduce_copy-e.log 2>&1; echo "bench rc $? $(el)"; cat $o/reduce_copy-e.log
fi
