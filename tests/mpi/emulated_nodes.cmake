# Emulated nodes and --transport on CPU ranks (labels mpi): real launches, rows and messages checked.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME mpi.emulated_nodes
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/emulated_nodes.py --ccbench $<TARGET_FILE:ccbench>
                 --mpiexec ${MPIEXEC_EXECUTABLE} --paths ${CMAKE_CURRENT_LIST_DIR}/../../scripts/paths.sh)
set_tests_properties(mpi.emulated_nodes PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 2 RUN_SERIAL TRUE)
# The net transport's proxy over real tcp, with this process playing the GPU's side of the FIFOs;
# where no rank has a usable RDMA port, each run also checks that a proxy over ib refuses with exit
# code 3 and the reason.
add_executable(ccbench_net_proxy_test ${CMAKE_CURRENT_LIST_DIR}/net_proxy_test.cpp)
target_link_libraries(ccbench_net_proxy_test PRIVATE ccbench_transports)
foreach(np 2 3)
  add_test(NAME mpi.net_proxy.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} ${np}
                   $<TARGET_FILE:ccbench_net_proxy_test>)
  set_tests_properties(mpi.net_proxy.np${np} PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS ${np}
                       PASS_REGULAR_EXPRESSION "net proxy over tcp: 3 FIFOs x 300 steps per rank pair, 8 I/O thread\\(s\\) per rank: ok")
endforeach()
# Every FIFO of a rank on one proxy thread (CCBENCH_GPU_NET_THREADS).
add_test(NAME mpi.net_proxy.np2_one_thread
         COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} 2
                 $<TARGET_FILE:ccbench_net_proxy_test>)
set_tests_properties(mpi.net_proxy.np2_one_thread PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2
                     ENVIRONMENT CCBENCH_GPU_NET_THREADS=1
                     PASS_REGULAR_EXPRESSION "net proxy over tcp: 3 FIFOs x 300 steps per rank pair, 1 I/O thread\\(s\\) per rank: ok")
# The same steps over RDMA (the GPU net path's ib backend with host-memory slots): needs an RDMA
# device, skipped with the reason elsewhere.
add_test(NAME rdma.net_proxy_ib
         COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} 2
                 $<TARGET_FILE:ccbench_net_proxy_test> ib)
set_tests_properties(rdma.net_proxy_ib PROPERTIES LABELS rdma TIMEOUT 120 PROCESSORS 2 SKIP_REGULAR_EXPRESSION "SKIPPED:"
                     PASS_REGULAR_EXPRESSION "net proxy over ib: 3 FIFOs x 300 steps per rank pair, [0-9]+ I/O thread\\(s\\) per rank: ok")
