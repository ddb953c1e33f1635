# Emulated nodes and --transport on CPU ranks (labels mpi): real launches, rows and messages checked.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME mpi.emulated_nodes
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/emulated_nodes.py --ccbench $<TARGET_FILE:ccbench>
                 --mpiexec ${MPIEXEC_EXECUTABLE} --paths ${CMAKE_CURRENT_LIST_DIR}/../../scripts/paths.sh)
set_tests_properties(mpi.emulated_nodes PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 2 RUN_SERIAL TRUE)
# The net transport's proxy over real tcp, with this process playing the GPU's side of the FIFOs;
# where no rank has a usable RDMA port, each run also checks that a proxy over ib refuses with exit
# code 3 and the reason. Decided by tests/expect_run.py: exit code 0 and the "ok" line.
add_executable(ccbench_net_proxy_test ${CMAKE_CURRENT_LIST_DIR}/net_proxy_test.cpp)
target_link_libraries(ccbench_net_proxy_test PRIVATE ccbench_transports)
set(_expect_run ${CMAKE_CURRENT_LIST_DIR}/../expect_run.py)
set(_proxy_ok "net proxy over tcp: 3 FIFOs x 300 steps per rank pair, %THREADS% I/O thread\\(s\\) per rank: ok$")
foreach(np 2 3)
  string(REPLACE "%THREADS%" 8 ok "${_proxy_ok}")
  add_test(NAME mpi.net_proxy.np${np}
           COMMAND ${Python3_EXECUTABLE} ${_expect_run} --output ${ok} --
                   ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} ${np}
                   $<TARGET_FILE:ccbench_net_proxy_test>)
  set_tests_properties(mpi.net_proxy.np${np} PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS ${np})
endforeach()
# Every FIFO of a rank on one proxy thread (CCBENCH_GPU_NET_THREADS).
string(REPLACE "%THREADS%" 1 ok "${_proxy_ok}")
add_test(NAME mpi.net_proxy.np2_one_thread
         COMMAND ${Python3_EXECUTABLE} ${_expect_run} --output ${ok} --
                 ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} 2
                 $<TARGET_FILE:ccbench_net_proxy_test>)
set_tests_properties(mpi.net_proxy.np2_one_thread PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2
                     ENVIRONMENT CCBENCH_GPU_NET_THREADS=1)
# The same steps over RDMA (the GPU net path's ib backend with host-memory slots): needs an RDMA
# device; skipped (exit 77) where the program says "SKIPPED:" with the reason.
add_test(NAME rdma.net_proxy_ib
         COMMAND ${Python3_EXECUTABLE} ${_expect_run} --skip-output "^SKIPPED: "
                 --output "net proxy over ib: 3 FIFOs x 300 steps per rank pair, [0-9]+ I/O thread\\(s\\) per rank: ok$" --
                 ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} 2
                 $<TARGET_FILE:ccbench_net_proxy_test> ib)
set_tests_properties(rdma.net_proxy_ib PROPERTIES LABELS rdma TIMEOUT 120 PROCESSORS 2 SKIP_RETURN_CODE 77)
# The same steps over ofi (libfabric): the credit channel's zero-copy ends (the caller's slots,
# transports/net/credit_channel.h) over a real provider, shm and tcp;ofi_rxm (FI_PROVIDER pins it).
if(CCBENCH_HAVE_LIBFABRIC)
  foreach(provider shm tcp)
    set(_fi ${provider})
    if(provider STREQUAL "tcp")
      set(_fi "tcp,ofi_rxm")
    endif()
    add_test(NAME mpi.ofi.net_proxy_${provider}_np3
             COMMAND ${Python3_EXECUTABLE} ${_expect_run}
                     --output "net proxy over ofi: 3 FIFOs x 300 steps per rank pair, 8 I/O thread\\(s\\) per rank: ok$" --
                     ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root -x FI_PROVIDER=${_fi}
                     ${MPIEXEC_NUMPROC_FLAG} 3 $<TARGET_FILE:ccbench_net_proxy_test> ofi)
    set_tests_properties(mpi.ofi.net_proxy_${provider}_np3 PROPERTIES LABELS "mpi;ofi" TIMEOUT 120 PROCESSORS 3)
  endforeach()
endif()
