#!/usr/bin/env bash
# One H200: build, then the one-GPU tier in two phases (a: everything but the overlap, energy and
# teardown tests; b: those) — `call.sh a` / `call.sh b`, each under one call's bound.
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
cmake --build build -j 16 --target ccbench ccbench_oneshot_sequence ccbench_reduce_copy_offsets ccbench_mesh_peers \
  ccbench_overlap_load ccbench_teardown ccbench_tree_peers > $o/build.log 2>&1 || { grep -E "error|FAILED" $o/build.log | head -30; exit 1; }
echo "build done $(el)"
slow='gpu1_(overlap|energy|teardown)'
if [ "$phase" = a ]; then sel=(-E "$slow"); elif [ "$phase" = b ]; then sel=(-R "$slow"); else
  sel=(-R 'gpu1_(p2p_every_impl_2|host_2|net_emulated_2|overlap_membw_2|telemetry_2|fault_stop_ring|hier_emulated_4)$'); fi
timeout $(( 585 - ($(date +%s)-S) )) scripts/gpu-test.sh gpu1 "${sel[@]}" > $o/tier-$phase.log 2>&1; echo "tier $phase rc $? $(el)"
grep -E "^gpu tests|^  skipped|Test +#.*(Passed|Failed|Timeout|Skipped)|FAIL" $o/tier-$phase.log | head -80
if [ "$phase" = b ]; then
  # What a build with PTX alone (no SASS: the driver compiles the kernels on first use) costs at run time.
  cmake -S . -B build-ptx -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr -DCMAKE_CXX_FLAGS=-I/opt/deps/usr/include \
    -DCMAKE_CUDA_ARCHITECTURES=90-virtual -DCCBENCH_BUILD_TESTS=OFF -DCCBENCH_BUILD_BENCHMARKS=OFF > $o/ptx-configure.log 2>&1
  t0=$(date +%s); cmake --build build-ptx -j 16 --target ccbench > $o/ptx-build.log 2>&1; echo "ptx build rc $? $(( $(date +%s)-t0 ))s"
  cuobjdump -lelf build-ptx/ccbench 2>/dev/null | wc -l; cuobjdump -lptx build-ptx/ccbench 2>/dev/null | wc -l
  run() { /usr/bin/time -f "%e s wall, %U s user" mpirun -np 2 --oversubscribe "$1" --device gpu --impl ring,tree,oneshot \
    --collective allreduce,allgather -d float,bf16 -b 1M -e 1M -n 5 -w 2 --out /tmp/$2 > $o/$2.log 2>&1; echo "$2 rc $?: $(tail -1 $o/$2.log)"; }
  rm -rf ~/.nv/ComputeCache; run build-ptx/ccbench ptx-cold; run build-ptx/ccbench ptx-warm; run build/ccbench sass
  rm -rf ~/.nv/ComputeCache; CUDA_MODULE_LOADING=EAGER run build-ptx/ccbench ptx-cold-eager
fi
if [ "$phase" = c ]; then
  # --measure-ceilings now reaches the links layer through the engine's CeilingMeter (harness/run.h).
  mpirun -np 2 --oversubscribe build/ccbench --device gpu --share-gpus --measure-ceilings --impl ring --collective allreduce \
    -b 1M -e 4M -n 5 -w 2 --out /tmp/ceil > $o/ceilings.log 2>&1; echo "ceilings rc $?"
  ls /tmp/ceil; python3 -c "import json;d=json.load(open('/tmp/ceil/links.json'));print('links.json keys', sorted(d)[:8])"
  head -4 /tmp/ceil/results.csv | cut -c1-300; grep -o '"efficiency[^,]*' /tmp/ceil/run.json | head -3
fi
echo "done $(el)"
