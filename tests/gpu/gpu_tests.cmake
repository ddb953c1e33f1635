# GPU tests (label gpu): every GPU implementation x dtype x op over awkward sizes, in-place and
# out-of-place, checked exactly by ccbench itself (exit code 0 = no wrong element). Skipped
# (exit 77) with the reason where this machine has no GPU.
set(_gpu_runner ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_gpu_test.sh)
# Every GPU implementation of the support matrix (implementations.cmake) that runs within one node:
# hier needs several (its tests: gpu1_hier_*, gpu_emulated_*). nccl-symm's all-gather and
# reduce-scatter are left out of gpu_gather_scatter_2 (see gpu_nccl_symm_2).
set(_all_gpu_impls ${CCBENCH_GPU_KERNELS} ${CCBENCH_GPU_NCCL})
list(REMOVE_ITEM _all_gpu_impls hier)
set(_gpu_impls_but_symm ${_all_gpu_impls})
list(REMOVE_ITEM _gpu_impls_but_symm nccl-symm)
list(JOIN _all_gpu_impls "," _all_gpu_impls)
list(JOIN _gpu_impls_but_symm "," _gpu_impls_but_symm)
function(ccbench_gpu_test name ranks)
  add_test(NAME ${name} COMMAND ${_gpu_runner} $<TARGET_FILE:ccbench> ${ranks} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE)
endfunction()

# Every dtype and op, sizes from 4 B (one float) to 3 MiB in steps of 3x: counts not divisible by
# the ranks, single elements, several slots per channel.
ccbench_gpu_test(gpu_allreduce_all_types_2 2 --collective allreduce --impl ${_all_gpu_impls}
                 -d all -o all -b 4 -e 3M -f 3 -n 3 -w 1 --timeout 20)
ccbench_gpu_test(gpu_gather_scatter_2 2 --collective allgather,reducescatter,broadcast,sendrecv
                 --impl ${_gpu_impls_but_symm} -d all -o sum,max -b 4 -e 3M -f 3 -n 3 -w 1 --timeout 20)
# NCCL's symmetric-window kernels: all-reduce, broadcast, sendrecv. Its all-gather and
# reduce-scatter gave wrong elements after back-to-back calls on NCCL 2.28.3 at piece sizes that
# are not multiples of 16 bytes (evidence h200x2-20261130-nccl-symm-repro).
ccbench_gpu_test(gpu_nccl_symm_2 2 --collective allreduce,broadcast,sendrecv
                 --impl nccl-symm -d all -o sum,max -b 4 -e 3M -f 3 -n 3 -w 1 --timeout 20)
# CUDA-graph capture and replay of every implementation.
ccbench_gpu_test(gpu_graphs_2 2 --collective allreduce,allgather --impl ${_all_gpu_impls}
                 -d float,half -b 8 -e 4M -f 8 -n 4 -w 1 -G 3 --timeout 20)
# The `algorithm` column: NCCL's choice as its profiler reported it (eager and captured), best's kernel.
ccbench_gpu_test(gpu_algorithm_2 2 --collective allreduce --impl nccl,nccl-ring,nccl-tree,best
                 -b 8 -e 8M -f 8 -n 4 -w 1 -G 2 --timeout 20)
set_tests_properties(gpu_algorithm_2 PROPERTIES
                     ENVIRONMENT CCBENCH_RESULT_CHECK=${CMAKE_CURRENT_SOURCE_DIR}/gpu/check_algorithm.py)
# 3 and 4 ranks on 2 GPUs (two ranks share a GPU): odd rank counts, trees with two children.
ccbench_gpu_test(gpu_three_ranks 3 --collective allreduce,allgather,reducescatter
                 --impl ring,tree,oneshot,twoshot,ce,best -d float,int8,bfloat16 -o sum,min -b 4 -e 1M -f 9 -n 2 -w 1 --timeout 30)
ccbench_gpu_test(gpu_four_ranks 4 --collective allreduce,allgather,reducescatter
                 --impl ring,tree,oneshot,twoshot,ce,best -d float,uint8 -o sum,prod -b 4 -e 1M -f 9 -n 2 -w 1 --timeout 30)

# All-to-all, alltoallv, gather and scatter on the copy engines (ce, and best, which runs ce for
# them): every dtype, sizes from 4 B in steps of 3x (single elements, pieces that are not
# multiples of 16 bytes), both placements where an in-place form exists, a root other than 0,
# eager and captured into CUDA graphs; 3 and 4 ranks (two ranks sharing a GPU, where NCCL does
# not run) with the last rank as root. measured_check.py fails the test unless ce and best
# measured every case with 0 wrong elements (on 2 ranks: every case nccl measured too) and best's
# `algorithm` column names ce.
set(_measured_check ${CMAKE_CURRENT_SOURCE_DIR}/gpu/measured_check.py)
set(_ce_colls alltoall,alltoallv,gather,scatter)
function(ccbench_gpu_ce_test name ranks root reference)
  ccbench_gpu_test(${name} ${ranks} --collective ${_ce_colls} --root ${root} ${ARGN})
  set(env "CCBENCH_RESULT_CHECK=${_measured_check}" "CCBENCH_EXPECT_MEASURED=ce,best:${_ce_colls}"
          "CCBENCH_EXPECT_IN_PLACE=gather,scatter" "CCBENCH_EXPECT_ROOT=${root}" "CCBENCH_REFERENCE=${reference}"
          "CCBENCH_EXPECT_ALGORITHM=ce=ce best=ce")
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}")
endfunction()
ccbench_gpu_ce_test(gpu_alltoall_all_types_2 2 1 nccl --impl ce,best,nccl -d all -b 4 -e 3M -f 3 -n 3 -w 1
                    --timeout 20)
# Large buffers (1, 16 and 256 MiB): copies of many MiB per peer.
ccbench_gpu_ce_test(gpu_alltoall_large_2 2 1 nccl --impl ce,best,nccl -d float,int8 -b 1M -e 256M -f 16 -n 3 -w 1
                    --timeout 30)
ccbench_gpu_ce_test(gpu_alltoall_graphs_2 2 1 nccl --impl ce,best,nccl -d float,half -b 8 -e 4M -f 8 -n 4 -w 1 -G 3
                    --timeout 20)
ccbench_gpu_ce_test(gpu_alltoall_three_ranks 3 2 "" --impl ce,best -d float,int8,bfloat16 -b 4 -e 1M -f 9 -n 2
                    -w 1 --timeout 30)
ccbench_gpu_ce_test(gpu_alltoall_four_ranks 4 3 "" --impl ce,best -d float,uint8 -b 4 -e 1M -f 9 -n 2 -w 1 -G 2
                    --timeout 30)
# Reduce with our kernels: ring (a chain toward the root over the FIFO connections), oneshot (the
# root reads every input directly) and best (the ring's chain), against nccl: every dtype and op, sizes from 4 B in
# steps of 3x, both placements, a root other than 0; measured_check.py fails the test unless they
# measured every case nccl measured, with 0 wrong elements, and named their kernels.
function(ccbench_gpu_reduce_test name ranks root reference)
  set(impls ring,oneshot,best)
  if(reference)
    set(impls ${impls},${reference})
  endif()
  ccbench_gpu_test(${name} ${ranks} --collective reduce --impl ${impls} --root ${root} ${ARGN})
  set(env "CCBENCH_RESULT_CHECK=${_measured_check}" "CCBENCH_EXPECT_MEASURED=ring,oneshot,best:reduce"
          "CCBENCH_EXPECT_IN_PLACE=reduce" "CCBENCH_EXPECT_ROOT=${root}" "CCBENCH_REFERENCE=${reference}"
          "CCBENCH_EXPECT_ALGORITHM=ring=ring-chain oneshot=oneshot-read best=ring-chain")
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}")
endfunction()
ccbench_gpu_reduce_test(gpu_reduce_all_types_2 2 1 nccl -d all -o all -b 4 -e 3M -f 3 -n 3 -w 1 --timeout 20)
# CUDA graphs (with ops whose in-place replays can be checked), and 40 MiB: several 1 MiB slots
# per ring channel, best on the ring.
ccbench_gpu_reduce_test(gpu_reduce_graphs_2 2 0 nccl -d float,half -o max,min -b 8 -e 40M -f 8 -n 3 -w 1 -G 2
                        --timeout 30)
# 3 ranks on 2 GPUs (two share one; NCCL does not run there), the last rank as root.
ccbench_gpu_reduce_test(gpu_reduce_three_ranks 3 2 "" -d float,int8,bfloat16 -o sum,min,avg -b 4 -e 40M -f 9 -n 2
                        -w 1 --timeout 30)

# -m 4 (nccl-tests' agg_iters): 4 collectives per iteration, NCCL's in one group, ours back to
# back; every row measured and checked with 0 wrong elements (in place, sums on one collective
# alone). Then captured into CUDA graphs, with ops whose in-place replays can be checked too.
set(_agg_expect "CCBENCH_EXPECT_MEASURED=ring,best,nccl:allreduce,reduce,allgather oneshot:reduce")
ccbench_gpu_test(gpu_agg_iters_2 2 --collective allreduce,reduce,allgather --impl ring,oneshot,best,nccl -m 4
                 -d float,int8 -o sum,max -b 4 -e 4M -f 16 -n 3 -w 1 --timeout 20)
ccbench_gpu_test(gpu_agg_iters_graphs_2 2 --collective allreduce,reduce,allgather --impl ring,oneshot,best,nccl
                 -m 4 -d float,half -o max,min -b 8 -e 4M -f 16 -n 3 -w 1 -G 2 --timeout 20)
foreach(t gpu_agg_iters_2 gpu_agg_iters_graphs_2)
  set_tests_properties(${t} PROPERTIES ENVIRONMENT "CCBENCH_RESULT_CHECK=${_measured_check};${_agg_expect}")
endforeach()

# Injected faults on GPU ranks: a stopped rank ends the job with exit code 5 within the deadline
# (our kernel naming the peer it waited for; NCCL's communicator aborted by the watchdog); a
# corrupted element of our kernel's or NCCL's output is found and named (exit code 1).
set(_gpu_fault_runner ${CMAKE_CURRENT_SOURCE_DIR}/gpu/run_gpu_fault_test.sh)
function(ccbench_gpu_fault_test name fault rc text)
  add_test(NAME ${name} COMMAND ${_gpu_fault_runner} $<TARGET_FILE:ccbench> 2 ${fault} ${rc} ${text} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 120 RUN_SERIAL TRUE)
endfunction()
ccbench_gpu_fault_test(gpu_fault_stop_ring "stop:rank=1,size=64K,iteration=1" 5 "from rank 1"
                       --impl ring --collective allreduce -b 16K -e 256K -f 4 --timeout 5)
# A stopped peer inside NCCL: the watchdog ends the wait, aborts the communicator and exits 5.
ccbench_gpu_fault_test(gpu_fault_stop_nccl "stop:rank=1,size=64K,iteration=1" 5
                       "aborted (ncclCommAbort)&&behind it on this node: rank 1 (host"
                       --impl nccl --collective allreduce -b 16K -e 256K -f 4 --timeout 5)
ccbench_gpu_fault_test(gpu_fault_corrupt_ring "corrupt:rank=1,size=64K,index=7" 1 "rank 1 (host"
                       --impl ring --collective allreduce -b 16K -e 256K -f 4)
ccbench_gpu_fault_test(gpu_fault_corrupt_nccl "corrupt:rank=0,size=64K,index=7" 1 "element 7"
                       --impl nccl --collective allgather -b 16K -e 256K -f 4)
ccbench_gpu_fault_test(gpu_fault_overrun_oneshot "overrun:rank=1,size=64K,bytes=16" 1 "guard bytes"
                       --impl oneshot --collective allreduce -b 16K -e 256K -f 4)

# GPU transports (transports/gpu/): every GPU implementation x path x dtype x awkward sizes,
# in-place and out-of-place; the `transport` column and the skip reasons checked by
# transport_check.py, NCCL's row naming what its debug log says it connected over.
set(_transport_check ${CMAKE_CURRENT_SOURCE_DIR}/gpu/transport_check.py)
function(ccbench_gpu_path_test name ranks expect skipped)
  ccbench_gpu_test(${name} ${ranks} ${ARGN})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT
                       "CCBENCH_RESULT_CHECK=${_transport_check};CCBENCH_EXPECT=${expect};CCBENCH_EXPECT_SKIPPED=${skipped}")
endfunction()
# p2p forced: today's path, the column says p2p.
ccbench_gpu_path_test(gpu_transport_p2p_2 2 "ring=p2p tree=p2p oneshot=p2p twoshot=p2p best=p2p nccl=nccl" ""
                      --transport p2p --collective allreduce --impl ring,tree,oneshot,twoshot,best,nccl
                      -d float,bfloat16,int8 -o sum,max -b 4 -e 3M -f 3 -n 3 -w 1 --timeout 20)
# host: ring and tree all-reduce through pinned host memory; NCCL over its SHM transport; the
# kernels that address peer memory directly are skipped with the reason.
ccbench_gpu_path_test(gpu_transport_host_allreduce_2 2 "ring=host tree=host nccl=nccl:SHM"
                      "oneshot,twoshot,best:runs over p2p only"
                      --transport host --collective allreduce --impl ring,tree,oneshot,twoshot,best,nccl
                      -d all -o sum,max -b 4 -e 3M -f 3 -n 3 -w 1 --timeout 20)
ccbench_gpu_path_test(gpu_transport_host_gather_2 2 "ring=host nccl=nccl:SHM" "ce/allgather:runs over p2p only"
                      --transport host --collective allgather,reducescatter --impl ring,ce,nccl
                      -d float,half,uint8 -o sum,min -b 4 -e 3M -f 3 -n 3 -w 1 --timeout 20)
# 3 ranks on 2 GPUs over host (two ranks share a GPU), large enough for several slots per channel.
ccbench_gpu_path_test(gpu_transport_host_three 3 "ring=host tree=host" ""
                      --transport host --collective allreduce --impl ring,tree -d float,int8 -o sum,min
                      -b 4 -e 40M -f 9 -n 2 -w 1 --timeout 30)
# CUDA graphs over host.
ccbench_gpu_path_test(gpu_transport_host_graphs_2 2 "ring=host" ""
                      --transport host --collective allreduce,allgather --impl ring -d float
                      -b 8 -e 4M -f 8 -n 4 -w 1 -G 3 --timeout 20)
# host with the copy engines moving the receive half, the send half or both through the ranks'
# CPU proxies (CCBENCH_GPU_HOST_RECV / CCBENCH_GPU_HOST_SEND, transports/gpu/gpu_host_ce.h): exact
# results at awkward sizes (partial last steps) and at 64 MiB (many slots per channel), eager,
# under CUDA graphs and with 3 ranks on 2 GPUs; the `algorithm` column says which halves ran on
# the copy engines.
function(ccbench_gpu_host_ce_test name recv send note ranks expect skipped)
  ccbench_gpu_path_test(${name} ${ranks} "${expect}" "${skipped}" ${ARGN})
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT "CCBENCH_GPU_HOST_RECV=${recv}"
               "CCBENCH_GPU_HOST_SEND=${send}" "CCBENCH_EXPECT_ALGORITHM_HAS=${note}")
endfunction()
ccbench_gpu_host_ce_test(gpu_transport_host_ce_recv_2 ce sm "(host ce:recv)" 2 "ring=host tree=host" ""
                         --transport host --collective allreduce --impl ring,tree -d all -o sum,max
                         -b 4 -e 3M -f 3 -n 3 -w 1 --timeout 20)
ccbench_gpu_host_ce_test(gpu_transport_host_ce_send_2 sm ce "(host ce:send)" 2 "ring=host tree=host" ""
                         --transport host --collective allreduce --impl ring,tree -d all -o sum,max
                         -b 4 -e 3M -f 3 -n 3 -w 1 --timeout 20)
ccbench_gpu_host_ce_test(gpu_transport_host_ce_both_2 ce ce "(host ce:recv+send)" 2 "ring=host" ""
                         --transport host --collective allreduce,allgather,reducescatter,reduce --root 1
                         --impl ring -d float,half,int8 -o sum,max -b 4 -e 64M -f 8 -n 3 -w 1 --timeout 30)
ccbench_gpu_host_ce_test(gpu_transport_host_ce_graphs_2 ce ce "(host ce:recv+send)" 2 "ring=host" ""
                         --transport host --collective allreduce,allgather --impl ring -d float
                         -b 8 -e 4M -f 8 -n 4 -w 1 -G 3 --timeout 20)
# Neither half set: the ring stages small calls with its SMs and, from CCBENCH_GPU_HOST_CE_MIN_BYTES
# (1 MiB here, 32 MiB by default), with the copy engines for both halves, eager and in graphs.
ccbench_gpu_path_test(gpu_transport_host_per_size_2 2 "ring=host" ""
                      --transport host --collective allreduce,allgather,reducescatter --impl ring -d float,int8
                      -o sum,max -b 4K -e 4M -f 4 -n 3 -w 1 -G 2 --timeout 20)
set_property(TEST gpu_transport_host_per_size_2 APPEND PROPERTY ENVIRONMENT "CCBENCH_GPU_HOST_CE_MIN_BYTES=1M"
             "CCBENCH_EXPECT_ALGORITHM_FROM=1048576:(host ce:recv+send)")
# 3 ranks on 2 GPUs: copy-engine staging needs a GPU per rank (a copy into a GPU that another
# process's spinning kernel holds waits for its time slice), so ring and tree say so and skip.
# Every row skipped: the run ends with exit code 3 (precondition), which the check expects.
ccbench_gpu_host_ce_test(gpu_transport_host_ce_three ce ce "" 3 "" "ring,tree:needs a GPU per rank"
                         --transport host --collective allreduce --impl ring,tree -d float,int8 -o sum,min
                         -b 4 -e 40M -f 9 -n 2 -w 1 --timeout 30)
set_property(TEST gpu_transport_host_ce_three APPEND PROPERTY ENVIRONMENT "CHECK_ARGS=--exit-code 3")
# net (tcp) for GPU ranks: ring and tree through pinned host FIFOs and the CPU proxy over tcp
# sockets (one stream per channel); NCCL pinned to NET/Socket.
ccbench_gpu_path_test(gpu_transport_net_2 2 "ring=net/tcp tree=net/tcp nccl=nccl:NET/Socket"
                      "oneshot:runs over p2p only"
                      --transport tcp --collective allreduce --impl ring,tree,oneshot,nccl -d float,int8,bfloat16
                      -o sum,max -b 4 -e 20M -f 7 -n 3 -w 1 --timeout 30)
ccbench_gpu_path_test(gpu_transport_net_gather_2 2 "ring=net/tcp" ""
                      --transport net --collective allgather,reducescatter --impl ring -d float,uint8 -o sum
                      -b 4 -e 3M -f 3 -n 3 -w 1 -G 2 --timeout 30)
# Reduce over host and net: the ring's chain runs on every path (and best, which takes it); oneshot
# reads peer memory directly and is skipped with the reason.
ccbench_gpu_path_test(gpu_transport_host_reduce_2 2 "ring=host best=host nccl=nccl:SHM" "oneshot:runs over p2p only"
                      --transport host --collective reduce --root 1 --impl ring,oneshot,best,nccl
                      -d float,half,uint8 -o sum,max,avg -b 4 -e 20M -f 7 -n 3 -w 1 --timeout 30)
ccbench_gpu_path_test(gpu_transport_net_reduce_2 2 "ring=net/tcp nccl=nccl:NET/Socket" "oneshot:runs over p2p only"
                      --transport tcp --collective reduce --root 1 --impl ring,oneshot,nccl -d float,int8
                      -o sum,prod -b 4 -e 20M -f 7 -n 3 -w 1 -G 2 --timeout 30)
# Two emulated nodes, one GPU each: p2p and host refuse across them, so auto takes net; NCCL
# (NCCL_HOSTID per node) connects over NET/Socket.
ccbench_gpu_path_test(gpu_emulated_nodes_2 2 "ring=net/tcp tree=net/tcp nccl=~NET/Socket"
                      "twoshot:runs over p2p only"
                      --emulate-nodes 2 --collective allreduce --impl ring,tree,twoshot,nccl -b 8 -e 16M -f 8 -n 3
                      -w 1 --timeout 30)
# run --model with measured ceilings: over p2p our ring and tree are predicted with the ce
# ceiling as the link; across 2 emulated nodes with the net/tcp ceiling (the net transport's tcp
# streams) as each node's NIC, and the tree's blocks with the ceiling of its 4 streams.
ccbench_gpu_test(gpu_model_p2p_2 2 --collective allreduce,allgather --impl ring,tree -b 64M -e 256M -f 4 -n 3
                 -w 1 --measure-ceilings --model h200x2-nv18 --timeout 30)
set_tests_properties(gpu_model_p2p_2 PROPERTIES ENVIRONMENT
                     "CCBENCH_RESULT_CHECK=${CMAKE_CURRENT_SOURCE_DIR}/gpu/check_model.py;CCBENCH_EXPECT_CEILING=ce")
ccbench_gpu_test(gpu_model_net_2 2 --emulate-nodes 2 --collective allreduce --impl ring,tree -b 16M -e 64M -f 4
                 -n 3 -w 1 --measure-ceilings --model h200x2-nv18 --timeout 30)
set_tests_properties(gpu_model_net_2 PROPERTIES ENVIRONMENT
                     "CCBENCH_RESULT_CHECK=${CMAKE_CURRENT_SOURCE_DIR}/gpu/check_model.py;CCBENCH_EXPECT_CEILING=net/tcp;CCBENCH_EXPECT_ALSO=net/tcp:4")
# 4 ranks on 2 GPUs as 2 x 2 emulated nodes: p2p inside a node, net between them.
ccbench_gpu_path_test(gpu_emulated_nodes_4 4 "ring=p2p+net/tcp nccl=~NET/Socket" ""
                      --emulate-nodes 2 --collective allreduce --impl ring,nccl -d float,half -b 4 -e 4M -f 9 -n 2
                      -w 1 --timeout 30)
# ib on GPU ranks without an RDMA device: exit 3 at start-up, before any result file, with the
# reason (check_results.py: the exit code, no results, the message).
ccbench_gpu_test(gpu_transport_ib_no_device 2 --transport ib --impl nccl --collective allreduce -b 8 -e 8 -n 1
                 -w 0 --timeout 20)
set_tests_properties(gpu_transport_ib_no_device PROPERTIES ENVIRONMENT
                     "CHECK_ARGS=--exit-code 3 --no-results;CCBENCH_EXPECT_OUTPUT=--transport ib: host [^:]*: (no RDMA device|this ccbench was built without ibverbs)")
# net over ib (labels gpu and rdma; skipped with the reason where there is no RDMA device): two
# emulated nodes, one GPU each; our ring and tree through the net proxy's RDMA WRITEs, every row
# exact, NCCL pinned to NET/IB. GPUDirect as available (FIFO slots in GPU memory where the GPU
# exports dma-bufs), then forced off (slots in pinned host memory, the column says net/ib:host).
function(ccbench_gpu_ib_test name expect)
  ccbench_gpu_path_test(${name} 2 "${expect}" "" --emulate-nodes 2 --transport ib --collective allreduce
                        --impl ring,tree,nccl -d float,int8 -o sum,max -b 4 -e 16M -f 8 -n 3 -w 1 --timeout 30 ${ARGN})
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT CCBENCH_NEEDS_RDMA=1)
  set_property(TEST ${name} PROPERTY LABELS gpu rdma)
endfunction()
ccbench_gpu_ib_test(gpu_transport_ib_2 "ring=~net/ib tree=~net/ib nccl=~NET/IB")
ccbench_gpu_ib_test(gpu_transport_ib_staged_2 "ring=net/ib:host tree=net/ib:host nccl=~NET/IB" --gpudirect off)
# net over ofi (labels gpu and ofi; skipped where ccbench has no libfabric): two emulated nodes,
# one GPU each; our ring and tree through the net proxy's channels over libfabric's tcp;ofi_rxm,
# which every machine has, every row exact. The FIFO slots in GPU memory where the provider
# registers it (FI_HMEM; the column then ends in :hmem), else and with --gpudirect off staged
# through pinned host memory (:host). NCCL over ofi needs the aws-ofi-nccl plugin and is left out.
function(ccbench_gpu_ofi_test name expect)
  ccbench_gpu_path_test(${name} 2 "${expect}" "" --emulate-nodes 2 --transport ofi --ofi-provider tcp
                        --collective allreduce --impl ring,tree -d float,int8 -o sum,max -b 4 -e 16M -f 8 -n 3 -w 1
                        --timeout 30 ${ARGN})
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT CCBENCH_NEEDS_LIBFABRIC=1)
  set_property(TEST ${name} PROPERTY LABELS gpu ofi)
endfunction()
ccbench_gpu_ofi_test(gpu_transport_ofi_2 "ring=~net/ofi:tcp tree=~net/ofi:tcp")
ccbench_gpu_ofi_test(gpu_transport_ofi_staged_2 "ring=~ofi_rxm:host tree=~ofi_rxm:host" --gpudirect off)
# Ring order as data: 4 ranks on 2 GPUs with the ring reversed (each rank sends to rank - 1), and
# as 2 emulated nodes of 2 with a ring that crosses between the nodes at every step; exact results.
ccbench_gpu_test(gpu_ring_order_reversed_4 4 --collective allreduce,allgather,reducescatter --impl ring
                 --ring-order 3,2,1,0 -d float,int8 -o sum,max -b 4 -e 4M -f 9 -n 2 -w 1 --timeout 30)
ccbench_gpu_test(gpu_ring_order_emulated_4 4 --collective allreduce,allgather,reducescatter --impl ring
                 --emulate-nodes 2 --ring-order 0,2,1,3 -d float -o sum -b 4 -e 4M -f 9 -n 2 -w 1 --timeout 30)
# --ring-order topo with 4 ranks on 2 GPUs: the ring follows NVLink neighbours (NVML's links, the
# same GPU nearest), so the two ranks of each GPU are neighbours on it.
ccbench_gpu_test(gpu_ring_order_topo_4 4 --collective allreduce,allgather --impl ring --ring-order topo
                 -d float -o sum -b 4 -e 4M -f 9 -n 2 -w 1 --timeout 30)
set_tests_properties(gpu_ring_order_topo_4 PROPERTIES
                     ENVIRONMENT CCBENCH_RESULT_CHECK=${CMAKE_CURRENT_SOURCE_DIR}/gpu/check_ring_order.py)
# hier: the two-level all-reduce and all-gather (collectives/gpu/hier_plan.h), every case checked
# exactly; measured_check.py fails the test unless hier measured every case (both placements,
# eager and captured) with 0 wrong elements over the expected paths. Sizes from 4 B in steps of
# 3x: counts below the ranks of a node, odd remainders, several slots per channel; avg divides
# once in each level.
function(ccbench_gpu_hier_test name ranks transport)
  ccbench_gpu_test(${name} ${ranks} --collective allreduce,allgather --impl hier ${ARGN})
  set(env "CCBENCH_RESULT_CHECK=${_measured_check}" "CCBENCH_EXPECT_MEASURED=hier:allreduce,allgather"
          "CCBENCH_EXPECT_IN_PLACE=allreduce,allgather" "CCBENCH_EXPECT_TRANSPORT=hier=${transport}")
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}")
endfunction()
# 4 ranks on 2 GPUs as 2 emulated nodes x 2: the rings in the nodes over p2p, the rings across
# (ranks 0,2 and 1,3) over net/tcp; all-gather reordered from the scratch buffer. Eager with every
# op; captured with ops whose in-place replays can be checked (a replayed in-place sum is not).
ccbench_gpu_hier_test(gpu_hier_emulated_4 4 p2p+net/tcp --emulate-nodes 2 -d float,half,int8,int64
                      -o sum,max,avg -b 4 -e 4M -f 3 -n 2 -w 1 --timeout 30)
ccbench_gpu_hier_test(gpu_hier_emulated_graphs_4 4 p2p+net/tcp --emulate-nodes 2 -d float,int8 -o max,min
                      -b 4 -e 4M -f 9 -n 2 -w 1 -G 2 --timeout 30)
# One node: the rings in the node only. One rank per node: the ring across only.
ccbench_gpu_hier_test(gpu_hier_one_node_2 2 p2p -d float,bfloat16,uint8 -o sum,min,avg -b 4 -e 4M -f 3 -n 2
                      -w 1 --timeout 20)
ccbench_gpu_hier_test(gpu_hier_one_rank_per_node_2 2 net/tcp --emulate-nodes 2 -d float,int32 -o sum,prod
                      -b 4 -e 4M -f 3 -n 2 -w 1 --timeout 30)
