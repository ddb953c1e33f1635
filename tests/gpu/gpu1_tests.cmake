# The one-GPU tier (labels gpu1 and gpu): every GPU implementation, collective, path and fault
# checked on a machine with one GPU. Every rank runs on the first GPU (CUDA_VISIBLE_DEVICES), so
# the tier runs the same way on a one-GPU box and on a node with eight; skipped (exit 77) with the
# reason where there is no GPU or no CUDA in the build.
#
# Two processes on one GPU time-slice it: every step of a spinning kernel costs ~2.3 ms (so does
# NCCL's: 4.5 ms for 8 B over NET/Socket between two such ranks; h200x1-20261201-reference), so
# sizes stop at a few MiB and
# iterations are few. What the tier cannot show: performance of any kind, NVLink (or PCIe)
# peer-to-peer between two GPUs, copy engines moving data between GPUs, and NCCL between two ranks
# of one node (NCCL refuses two ranks of a node on one GPU: those rows are skipped with that
# reason, and NCCL runs across emulated nodes over NET/Socket, and alone on one rank).
#
# Each test is decided from its results folder, as the 2-GPU tests are: tests/check_results.py
# (exit code, rows, run.json, footer), then measured_check.py (the named implementations measured
# every case of the named collectives with 0 wrong elements) and transport_check.py (the path each
# implementation took, and the rows that must be skipped with their reason).
set(_gpu1_runner ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_gpu_test.sh)
set(_gpu1_measured ${CMAKE_CURRENT_SOURCE_DIR}/gpu/measured_check.py)
set(_gpu1_transport ${CMAKE_CURRENT_SOURCE_DIR}/gpu/transport_check.py)
list(JOIN CCBENCH_GPU_NCCL "," _gpu1_nccl)  # the support matrix's (implementations.cmake)

# ccbench_gpu1_test(NAME RANKS MEASURED EXPECT SKIPPED ccbench-args...)
#   MEASURED  measured_check.py's "impl,impl:coll,coll ..." (every case measured, 0 wrong)
#   EXPECT    transport_check.py's "impl=transport ..." ("" for none)
#   SKIPPED   transport_check.py's "impl,impl/coll:TEXT" ("" for none)
function(ccbench_gpu1_test name ranks measured expect skipped)
  add_test(NAME ${name} COMMAND ${_gpu1_runner} $<TARGET_FILE:ccbench> ${ranks} ${ARGN})
  set(env "CCBENCH_ONE_GPU=1" "CCBENCH_RESULT_CHECK=${_gpu1_measured} ${_gpu1_transport}"
          "CCBENCH_EXPECT_MEASURED=${measured}" "CCBENCH_EXPECT=${expect}" "CCBENCH_EXPECT_SKIPPED=${skipped}")
  set_tests_properties(${name} PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 300 RUN_SERIAL TRUE
                       ENVIRONMENT "${env}")
endfunction()

# p2p between two processes on the same GPU (CUDA IPC maps the other process's memory): every
# implementation of ours and every collective it implements (the support matrix's kernels and
# their collectives); NCCL's skipped before NCCL is called, naming the way out (each collective it
# implements; the others are skipped as undeclared).
set(_every_measured)
set(_every_p2p)
set(_every_nccl)
foreach(_impl IN LISTS CCBENCH_GPU_KERNELS)
  list(APPEND _every_measured "${_impl}:${CCBENCH_GPU_COLLECTIVES_${_impl}}")
  list(APPEND _every_p2p "${_impl}=p2p")
endforeach()
foreach(_impl IN LISTS CCBENCH_GPU_NCCL)
  string(REPLACE "," ";" _colls "${CCBENCH_GPU_COLLECTIVES_${_impl}}")
  foreach(_coll IN LISTS _colls)
    list(APPEND _every_nccl "${_impl}/${_coll}")
  endforeach()
endforeach()
list(JOIN _every_measured " " _every_measured)
list(JOIN _every_p2p " " _every_p2p)
list(JOIN _every_nccl "," _every_nccl)
list(JOIN CCBENCH_GPU_KERNELS "," _every_kernel)
ccbench_gpu1_test(gpu1_p2p_every_impl_2 2 "${_every_measured}" "${_every_p2p}" "${_every_nccl}:--emulate-nodes"
                  --collective all --impl ${_every_kernel},${_gpu1_nccl} -d float -o sum
                  -b 4 -e 256K -f 8 -n 2 -w 1 --timeout 60)
# Every data type and operation through our ring (and the tree's all-reduce), both placements.
ccbench_gpu1_test(gpu1_dtypes_ops_2 2 "ring:allreduce tree:allreduce" "ring=p2p tree=p2p" ""
                  --collective allreduce --impl ring,tree -d all -o all -b 4 -e 16K -f 16 -n 2 -w 1 --timeout 60)
ccbench_gpu1_test(gpu1_dtypes_reduce_2 2 "ring:reducescatter,reduce oneshot:reduce" "" ""
                  --collective reducescatter,reduce --impl ring,oneshot --root 1 -d half,bfloat16,int8,uint64,double
                  -o sum,prod,min,max,avg -b 4 -e 16K -f 16 -n 2 -w 1 --timeout 60)
# The precision pattern (collectives/verifiable.h: full-mantissa values, double beyond float's range
# and precision, signed zeros, NaN, subnormals, every narrow bit pattern in min/max) through our
# kernels' reductions, every floating dtype and op, and NCCL alone on one rank; exact against the
# expected values the unit tests hold to the independent reference.
ccbench_gpu1_test(gpu1_precision_3 3
                  "ring:allreduce,reducescatter,reduce tree:allreduce oneshot:allreduce,reduce twoshot:allreduce"
                  "ring=p2p tree=p2p" ""
                  --collective allreduce,reducescatter,reduce --impl ring,tree,oneshot,twoshot --pattern precision
                  -d double,float,half,bfloat16,f8e4m3,f8e5m2 -o all -b 8 -e 64K -f 32 -n 2 -w 1 --timeout 60)
ccbench_gpu1_test(gpu1_precision_nccl_one_rank 1 "nccl:allreduce,reducescatter,reduce" "" ""
                  --collective allreduce,reducescatter,reduce --impl nccl --pattern precision
                  -d double,float,half,bfloat16 -o sum,prod,min,max -b 8 -e 64K -f 32 -n 2 -w 1 --timeout 60)
# Three ranks: odd rank counts, a tree with two children, counts not divisible by the ranks.
ccbench_gpu1_test(gpu1_three_ranks 3
                  "ring:allreduce,allgather,reducescatter,reduce tree:allreduce,allgather oneshot:allreduce twoshot:allreduce ce:allgather,alltoall"
                  "ring=p2p tree=p2p" ""
                  --collective allreduce,allgather,reducescatter,reduce,alltoall --root 2
                  --impl ring,tree,oneshot,twoshot,ce -d float,int8 -o sum,min -b 4 -e 1M -f 16 -n 2 -w 1
                  --timeout 60)
# Four ranks on one GPU, the tree at 64 MiB (8 MiB per channel and tree at the default 32
# channels): every rank's grid must fit resident beside the others', so the channels are sized
# by the SMs shared among the ranks of the GPU (GpuImpl::resident_limit), never more.
ccbench_gpu1_test(gpu1_tree_four_ranks 4 "tree:allreduce ring:allreduce" "tree=p2p ring=p2p" ""
                  --collective allreduce --impl tree,ring -d float -o sum -b 64M -e 64M -n 1 -w 1 --timeout 120)
# Host staging (pinned shared host memory, SMs on both halves): every collective of the ring and
# tree, 16-bit and 8-bit types, several slots per channel at 3 MiB; oneshot refused with the reason.
ccbench_gpu1_test(gpu1_host_2 2 "ring:allreduce,allgather,reducescatter,reduce tree:allreduce"
                  "ring=host tree=host" "oneshot/allreduce,oneshot/reduce:runs over p2p only"
                  --transport host --collective allreduce,allgather,reducescatter,reduce --impl ring,tree,oneshot
                  -d half,bfloat16,int8 -o sum,avg -b 4 -e 3M -f 9 -n 2 -w 1 --timeout 90)
# net/tcp between two emulated nodes: our ring and tree through the CPU proxies, NCCL pinned to
# NET/Socket (NCCL_HOSTID per emulated node), so NCCL runs on one GPU too.
ccbench_gpu1_test(gpu1_net_emulated_2 2
                  "ring:allreduce,allgather,reducescatter tree:allreduce nccl:allreduce,allgather,reducescatter nccl-ring:allreduce nccl-tree:allreduce"
                  "ring=net/tcp tree=net/tcp nccl=~NET/Socket" ""
                  --emulate-nodes 2 --collective allreduce,allgather,reducescatter
                  --impl ring,tree,nccl,nccl-ring,nccl-tree -d float,bfloat16 -o sum,max -b 4 -e 1M -f 16 -n 2 -w 1
                  --timeout 90)
# hier on 4 ranks as 2 emulated nodes of 2: p2p in a node, net/tcp between them.
ccbench_gpu1_test(gpu1_hier_emulated_4 4 "hier:allreduce,allgather" "hier=p2p+net/tcp" ""
                  --emulate-nodes 2 --collective allreduce,allgather --impl hier -d float,half,int8 -o sum,avg
                  -b 4 -e 1M -f 16 -n 2 -w 1 --timeout 90)
# CUDA graphs: capture and replay of every implementation (ops whose in-place replays check).
ccbench_gpu1_test(gpu1_graphs_2 2
                  "ring:allreduce,allgather,reducescatter tree:allreduce,allgather oneshot:allreduce twoshot:allreduce ce:allgather best:allreduce,allgather,reducescatter"
                  "" ""
                  --collective allreduce,allgather,reducescatter --impl ring,tree,oneshot,twoshot,ce,best -d float
                  -o max -b 8 -e 256K -f 8 -n 2 -w 1 -G 2 --timeout 60)
# -m 3 (collectives back to back per iteration) with buffers three elements late (-u 3): the
# kernels' unaligned paths (the ring's and tree's kernels launched for misaligned buffers, with
# reduce_copy's shifted loads) and the guard regions around offset buffers.
ccbench_gpu1_test(gpu1_agg_misaligned_2 2
                  "ring:allreduce,allgather,reducescatter,reduce tree:allreduce oneshot:allreduce,reduce ce:alltoall best:allreduce,alltoall"
                  "" ""
                  --collective allreduce,allgather,reducescatter,reduce,alltoall --impl ring,tree,oneshot,ce,best
                  -d float,half,int8 -o sum,max -m 3 -u 3 -b 4 -e 256K -f 8 -n 2 -w 1 --timeout 60)
# NCCL on one rank: a real communicator on the GPU, every collective NCCL has.
ccbench_gpu1_test(gpu1_nccl_one_rank 1
                  "nccl:allreduce,allgather,reducescatter,broadcast,sendrecv,alltoall,reduce,gather,scatter nccl-symm:allreduce"
                  "" ""
                  --collective all --impl nccl,nccl-symm -d float,half -o sum,max -b 4 -e 1M -f 16 -n 2 -w 1 --timeout 60)
# NCCL that cannot be loaded (a wrong CCBENCH_NCCL_LIBRARY): every NCCL row skipped with the
# reason, our kernels measured as ever.
ccbench_gpu1_test(gpu1_nccl_missing 1 "ring:allreduce" "" "nccl,nccl-ring,nccl-symm,nccl-tree/allreduce:NCCL could not be loaded"
                  --collective allreduce --impl ring,nccl,nccl-ring,nccl-tree,nccl-symm -b 4 -e 64K -f 16 -n 2 -w 1)
set_property(TEST gpu1_nccl_missing APPEND PROPERTY ENVIRONMENT CCBENCH_NCCL_LIBRARY=/nonexistent/libnccl.so.2)

# Injected faults on ranks sharing the GPU: a stopped rank ends the job with exit code 5 within
# the deadline, naming the peer waited for; a corrupted element is found and named (exit code 1),
# in the output or in the send buffer;
# bytes written past a buffer's end are caught by its guard region (exit code 1). NCCL stopped
# across emulated nodes: the watchdog aborts the communicator (exit 5).
set(_gpu1_fault_runner ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_gpu_fault_test.sh)
# The runner holds each job to docs/reliability.md's bound: a stuck job within 2 x --timeout + 4 s
# (after the deadline expired), any other within its start-up and a few seconds.
function(ccbench_gpu1_fault_test name ranks fault rc text)
  add_test(NAME ${name} COMMAND ${_gpu1_fault_runner} $<TARGET_FILE:ccbench> ${ranks} ${fault} ${rc} ${text} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 120 RUN_SERIAL TRUE
                       ENVIRONMENT "CCBENCH_ONE_GPU=1")
endfunction()
ccbench_gpu1_fault_test(gpu1_fault_stop_ring 2 "stop:rank=1,size=64K,iteration=1" 5 "from rank 1"
                        --impl ring --collective allreduce -b 16K -e 256K -f 4 -n 2 -w 1 --timeout 5)
ccbench_gpu1_fault_test(gpu1_fault_corrupt_ring 2 "corrupt:rank=1,size=64K,index=7" 1 "rank 1 (host"
                        --impl ring --collective allreduce -b 16K -e 256K -f 4 -n 2 -w 1)
# Rank 1's send buffer written after the last call of the 64K out-of-place measurement: outputs
# stay right, and the send buffer's check names the rank and the element (exit code 1).
ccbench_gpu1_fault_test(gpu1_fault_corrupt_send_ring 2 "corrupt_send:rank=1,size=64K,index=7" 1
                        "rank 1 (host&&the send buffer was modified: element 7"
                        --impl ring --collective allreduce -b 16K -e 256K -f 4 -n 2 -w 1)
ccbench_gpu1_fault_test(gpu1_fault_overrun_oneshot 2 "overrun:rank=1,size=64K,bytes=16" 1 "guard bytes"
                        --impl oneshot --collective allreduce -b 16K -e 256K -f 4 -n 2 -w 1)
ccbench_gpu1_fault_test(gpu1_fault_stop_nccl_emulated 2 "stop:rank=1,size=64K,iteration=1" 5
                        "aborted (ncclCommAbort)" --emulate-nodes 2 --impl nccl --collective allreduce
                        -b 16K -e 256K -f 4 -n 2 -w 1 --timeout 5)

# Health telemetry on the real GPU: NVML's answers in every row, run.json and the series.
add_test(NAME gpu1_telemetry_2 COMMAND ${_gpu1_runner} $<TARGET_FILE:ccbench> 2 --collective allreduce --impl ring
         -b 8 -e 1M -f 32 -n 5 -w 1 --telemetry on --telemetry-interval 20 --timeout 60)
set_tests_properties(gpu1_telemetry_2 PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 120 RUN_SERIAL TRUE
                     ENVIRONMENT "CCBENCH_ONE_GPU=1;CCBENCH_EXPECT_GPUS=1;CCBENCH_RESULT_CHECK=${CMAKE_CURRENT_SOURCE_DIR}/gpu/telemetry_check.py")

# One-shot driven directly with sizes that shrink and grow again, eagerly and in one CUDA graph
# over mixed sizes (tests/gpu/oneshot_sequence.cpp): no word is ever taken from a stale line.
if(CCBENCH_HAVE_CUDA)
  add_executable(ccbench_oneshot_sequence ${CMAKE_CURRENT_SOURCE_DIR}/gpu/oneshot_sequence.cpp)
  target_link_libraries(ccbench_oneshot_sequence PRIVATE ccbench_harness_lib)
  add_test(NAME gpu1_oneshot_sequence
           COMMAND ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe --bind-to none -np 2
                   -x CUDA_VISIBLE_DEVICES=0 $<TARGET_FILE:ccbench_oneshot_sequence>)
  set_tests_properties(gpu1_oneshot_sequence PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 120
                       RUN_SERIAL TRUE)
  # 16 ranks (a PCIe node of 16 GPUs) on one GPU over host: each rank maps only its ring's and its
  # trees' peers, as /proc/self/maps shows (tests/gpu/mesh_peers.cpp). Small FIFOs: 16 regions
  # share /dev/shm.
  add_executable(ccbench_mesh_peers ${CMAKE_CURRENT_SOURCE_DIR}/gpu/mesh_peers.cpp)
  target_link_libraries(ccbench_mesh_peers PRIVATE ccbench_harness_lib)
  add_test(NAME gpu1_mesh_peers_16
           COMMAND ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe --bind-to none -np 16
                   -x CUDA_VISIBLE_DEVICES=0 -x CCBENCH_GPU_HOST_CHANNELS=2 -x CCBENCH_GPU_TREE_CHANNELS=2
                   -x CCBENCH_GPU_SLOT_BYTES=64K $<TARGET_FILE:ccbench_mesh_peers>)
  set_tests_properties(gpu1_mesh_peers_16 PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 240
                       RUN_SERIAL TRUE)
  # 8 ranks (an 8-GPU node) on one GPU over p2p: the tree maps its trees' FIFO memory, the Bruck
  # all-gather's log2(n) peers' scratch and receive buffers during an all-gather only, none during
  # an all-reduce, as the process's CUDA IPC imports show; a mapping CUDA refuses on one rank is
  # one agreed error on every rank (tests/gpu/tree_peers.cpp).
  set(_direct ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_direct_test.sh)
  add_executable(ccbench_tree_peers ${CMAKE_CURRENT_SOURCE_DIR}/gpu/tree_peers.cpp)
  target_link_libraries(ccbench_tree_peers PRIVATE ccbench_harness_lib)
  add_test(NAME gpu1_tree_peers_8
           COMMAND ${_direct} "^tree peers: 8 ranks over p2p, [0-9]+ checks per rank: ok: " ${MPIEXEC_EXECUTABLE} 8
                   $<TARGET_FILE:ccbench_tree_peers>)
  set(_small_fifos "-x CCBENCH_GPU_CHANNELS=2 -x CCBENCH_GPU_TREE_CHANNELS=2 -x CCBENCH_GPU_SLOT_BYTES=64K")
  set_tests_properties(gpu1_tree_peers_8 PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 240 RUN_SERIAL TRUE
                       ENVIRONMENT "CCBENCH_DIRECT_TEST_ENV=${_small_fifos}")
  # Buffers freed and re-created 1000 times between cases on 4 ranks over p2p (tree all-gather,
  # oneshot, twoshot, ce, ring), one rank late into each detach and teardown: every rank's CUDA
  # IPC mappings closed before any rank frees (tests/gpu/teardown.cpp); under compute-sanitizer's
  # memcheck where the machine has it.
  add_executable(ccbench_teardown ${CMAKE_CURRENT_SOURCE_DIR}/gpu/teardown.cpp)
  target_link_libraries(ccbench_teardown PRIVATE ccbench_harness_lib)
  add_test(NAME gpu1_teardown_1000
           COMMAND ${_direct} --sanitizer "${CUDAToolkit_BIN_DIR}"
                   "^teardown: 1000 cycles of buffers freed and re-created .* on 4 ranks, [0-9]+ checks per rank, .*: ok: "
                   ${MPIEXEC_EXECUTABLE} 4 $<TARGET_FILE:ccbench_teardown> 1000)
  set_tests_properties(gpu1_teardown_1000 PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 600 RUN_SERIAL TRUE
                       ENVIRONMENT "CCBENCH_DIRECT_TEST_ENV=${_small_fifos}")
endif()

# ---- Training conditions (docs/guides/training.md) ----------------------------------------------
# FP8 through every kernel of ours that reduces or moves it, every op, both placements, 2 and 3
# ranks (3: avg divides by 3, whose fp8 is off by 3 %, and a tree node reduces two children):
# every element checked against the exact result (collectives/verifiable.h).
ccbench_gpu1_test(gpu1_fp8_2 2
                  "ring:allreduce,reducescatter,reduce,allgather tree:allreduce oneshot:allreduce twoshot:allreduce ce:allgather"
                  "ring=p2p tree=p2p oneshot=p2p twoshot=p2p ce=p2p" ""
                  --collective allreduce,reducescatter,reduce,allgather --impl ring,tree,oneshot,twoshot,ce --root 1
                  -d f8e4m3,f8e5m2 -o sum,prod,min,max,avg -b 4 -e 256K -f 16 -n 2 -w 1 --timeout 90)
ccbench_gpu1_test(gpu1_fp8_three_ranks 3 "ring:allreduce,reducescatter tree:allreduce oneshot:allreduce twoshot:allreduce"
                  "" ""
                  --collective allreduce,reducescatter --impl ring,tree,oneshot,twoshot -d f8e4m3,f8e5m2
                  -o sum,avg,max -b 3 -e 192K -f 16 -n 2 -w 1 --timeout 90)
# NCCL's fp8 (NCCL >= 2.24, reductions on compute capability >= 9.0): one rank, and two ranks over
# NET/Socket between emulated nodes, where NCCL reduces what our check expects.
ccbench_gpu1_test(gpu1_nccl_fp8_one_rank 1 "nccl:allreduce,allgather,reducescatter,reduce" "" ""
                  --collective allreduce,allgather,reducescatter,reduce --impl nccl -d f8e4m3,f8e5m2
                  -o sum,prod,min,max,avg -b 4 -e 1M -f 16 -n 2 -w 1 --timeout 60)
ccbench_gpu1_test(gpu1_nccl_fp8_emulated_2 2 "nccl:allreduce,allgather,reducescatter ring:allreduce"
                  "nccl=~NET/Socket ring=net/tcp" ""
                  --emulate-nodes 2 --collective allreduce,allgather,reducescatter --impl nccl,ring
                  -d f8e4m3,f8e5m2 -o sum,avg,min -b 4 -e 1M -f 16 -n 2 -w 1 --timeout 90)
# One element of an fp8 all-reduce's output corrupted: found and named (exit code 1).
ccbench_gpu1_fault_test(gpu1_fault_corrupt_fp8 2 "corrupt:rank=1,size=64K,index=7" 1 "rank 1 (host"
                        --impl ring --collective allreduce -d f8e4m3 -o sum -b 16K -e 256K -f 4 -n 2 -w 1)

set(_gpu1_training ${CMAKE_CURRENT_SOURCE_DIR}/gpu/training_check.py)
# ccbench_gpu1_training_test(NAME RANKS MEASURED CHECK-ENV ccbench-args...): measured_check.py's
# MEASURED, then training_check.py with CHECK-ENV ("VAR=value;VAR=value").
function(ccbench_gpu1_training_test name ranks measured check_env)
  add_test(NAME ${name} COMMAND ${_gpu1_runner} $<TARGET_FILE:ccbench> ${ranks} ${ARGN})
  set(env "CCBENCH_ONE_GPU=1" "CCBENCH_RESULT_CHECK=${_gpu1_measured} ${_gpu1_training}"
          "CCBENCH_EXPECT_MEASURED=${measured}" ${check_env})
  set_tests_properties(${name} PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 300 RUN_SERIAL TRUE
                       ENVIRONMENT "${env}")
endfunction()
# --overlap: a cuBLAS GEMM and our copy kernel beside every implementation's timed phases, rates
# alone and during in every eager row; CUDA-graph rows without it (out of place: replayed in-place
# all-reduce rows are not checked; up to 512 KiB: one-shot's limit at bfloat16).
ccbench_gpu1_training_test(gpu1_overlap_gemm_2 2 "ring:allreduce,allgather ce:allgather oneshot:allreduce"
                           "CCBENCH_EXPECT_LOAD=gemm"
                           --overlap gemm:2048 --collective allreduce,allgather --impl ring,ce,oneshot -d bfloat16
                           -o sum -b 64K -e 512K -f 8 -n 4 -w 1 -G 1 --in-place no --timeout 120)
ccbench_gpu1_training_test(gpu1_overlap_membw_2 2 "ring:allreduce twoshot:allreduce" "CCBENCH_EXPECT_LOAD=membw"
                           --overlap membw:256M --collective allreduce --impl ring,twoshot -b 1M -e 16M -f 4 -n 4 -w 1
                           --timeout 120)
ccbench_gpu1_training_test(gpu1_overlap_nccl_one_rank 1 "nccl:allreduce" "CCBENCH_EXPECT_LOAD=gemm"
                           --overlap gemm --collective allreduce --impl nccl -b 1M -e 64M -f 8 -n 4 -w 1 --timeout 120)
# --overlap measured right, the load driven directly (tests/gpu/overlap_load.cpp): two ranks sharing
# the GPU lose nothing in rows without a collective (alone is measured with every sharer loading);
# 10^5 small launches leave memory flat at a plain back-to-back loop's rate; a grid shaped like a
# collective's (whole-SM blocks waiting for each other) starts beside the load as if alone.
if(CCBENCH_HAVE_CUDA)
  add_executable(ccbench_overlap_load ${CMAKE_CURRENT_SOURCE_DIR}/gpu/overlap_load.cpp
                                      ${CMAKE_CURRENT_SOURCE_DIR}/gpu/spin_grid.cu)
  target_include_directories(ccbench_overlap_load PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(ccbench_overlap_load PRIVATE ccbench_harness_lib)
  function(ccbench_gpu1_overlap_load_test name ranks)
    add_test(NAME ${name}
             COMMAND ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe --bind-to none -np ${ranks}
                     -x CUDA_VISIBLE_DEVICES=0 $<TARGET_FILE:ccbench_overlap_load> ${ARGN})
    set_tests_properties(${name} PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 180 RUN_SERIAL TRUE)
  endfunction()
  ccbench_gpu1_overlap_load_test(gpu1_overlap_sharers_2 2 sharers membw:256M gemm:4096)
  ccbench_gpu1_overlap_load_test(gpu1_overlap_launches 1 launches membw:1M gemm:256)
  ccbench_gpu1_overlap_load_test(gpu1_overlap_room 1 room)
endif()
# --energy: NVML's counter over windows of >= 1 s, every eager row; two ranks on one GPU count it once.
ccbench_gpu1_training_test(gpu1_energy_1 1 "nccl:allreduce,allgather"
                           "CCBENCH_EXPECT_ENERGY=1;CCBENCH_EXPECT_ENERGY_GPUS=1"
                           --energy on --collective allreduce,allgather --impl nccl -b 64M -e 64M -n 4 -w 1 --timeout 120)
# Beside a load that slows every call many times over (two ranks time-slicing one GPU with a GEMM
# each): the window, run after the load stopped, still lasts >= 1 s by the wall clock.
ccbench_gpu1_training_test(gpu1_energy_overlap_2 2 "ring:allreduce"
                           "CCBENCH_EXPECT_ENERGY=1;CCBENCH_EXPECT_ENERGY_GPUS=1;CCBENCH_EXPECT_LOAD=gemm"
                           --overlap gemm --energy on --collective allreduce --impl ring -b 1M -e 16M -f 4 -n 4 -w 1
                           --in-place no --timeout 120)
ccbench_gpu1_training_test(gpu1_energy_shared_2 2 "ring:allreduce ce:allgather"
                           "CCBENCH_EXPECT_ENERGY=1;CCBENCH_EXPECT_ENERGY_GPUS=1"
                           --energy on --collective allreduce,allgather --impl ring,ce -b 16M -e 16M -n 4 -w 1
                           --in-place no --timeout 120)
# --nccl-config: two settings in one launch, each its own communicator and rows; NCCL's own report
# (the algorithm column) shows each ran the protocol it was given. Across emulated nodes, as NCCL
# refuses two ranks of a node on one GPU.
ccbench_gpu1_training_test(gpu1_nccl_config_emulated_2 2 "nccl:allreduce"
                           "CCBENCH_EXPECT_CONFIGS=nccl:NCCL_PROTO=Simple|NCCL_PROTO=LL"
                           --emulate-nodes 2 --nccl-config NCCL_PROTO=Simple,LL --collective allreduce --impl nccl
                           -b 4K -e 1M -f 16 -n 2 -w 1 --timeout 120)
ccbench_gpu1_training_test(gpu1_nccl_config_one_rank 1 "nccl:allreduce,allgather"
                           "CCBENCH_EXPECT_CONFIGS=nccl:maxCTAs=default|maxCTAs=2"
                           --nccl-config maxCTAs=default,2 --collective allreduce,allgather --impl nccl -b 4K -e 4M
                           -f 32 -n 2 -w 1 --timeout 60)

# The kernels' data loop on one GPU, one process (tests/gpu/reduce_copy_bench.cu): int8 and half
# buffers aligned, equally misaligned and misaligned differently, reduce_copy against the
# element-by-element loop on the same buffers; every result checked. A measurement, so its own
# target run by hand or by a GPU call: build/tests/ccbench_reduce_copy_bench.
# The same loop at every kind of offset, 1-3 sources into 1-3 destinations, every output element
# and the bytes around it checked (tests/gpu/reduce_copy_offsets.cu): a test of the tier.
if(CCBENCH_HAVE_CUDA)
  add_executable(ccbench_reduce_copy_offsets ${CMAKE_CURRENT_SOURCE_DIR}/gpu/reduce_copy_offsets.cu)
  target_include_directories(ccbench_reduce_copy_offsets PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(ccbench_reduce_copy_offsets PRIVATE ccbench::core)
  add_test(NAME gpu1_reduce_copy_offsets COMMAND $<TARGET_FILE:ccbench_reduce_copy_offsets>)
  set_tests_properties(gpu1_reduce_copy_offsets PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 120
                       RUN_SERIAL TRUE)
  add_executable(ccbench_reduce_copy_bench ${CMAKE_CURRENT_SOURCE_DIR}/gpu/reduce_copy_bench.cu)
  target_include_directories(ccbench_reduce_copy_bench PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(ccbench_reduce_copy_bench PRIVATE ccbench::core)
endif()
