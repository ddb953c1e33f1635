# The libfabric (ofi) transport (labels ofi and mpi), over the providers every machine has:
# tcp;ofi_rxm, and shm between ranks of one host. EFA, cxi (Slingshot), verbs and PSM3 need their
# NICs and never ran in CI; on a machine that has one, CCBENCH_OFI_TEST_PROVIDER=efa (or cxi, verbs,
# psm3) points the same tests at it instead of tcp;ofi_rxm (docs/guides/ofi.md).
add_executable(ccbench_ofi_test ${CMAKE_CURRENT_LIST_DIR}/ofi_test.cpp)
target_link_libraries(ccbench_ofi_test PRIVATE ccbench_transports)
add_test(NAME mpi.ofi.channels_np3
         COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} 3
                 ${MPIEXEC_PREFLAGS} $<TARGET_FILE:ccbench_ofi_test> ${MPIEXEC_POSTFLAGS})
set_tests_properties(mpi.ofi.channels_np3 PROPERTIES LABELS "mpi;ofi" TIMEOUT 300 PROCESSORS 3 SKIP_RETURN_CODE 77)

# ccbench itself over ofi, decided from its result files (tests/mpi/ofi_runs.py): every CPU
# implementation and collective on 2 to 5 ranks, one node and emulated nodes, both providers and
# protocols, ccbench's default provider; shm without cross-memory attach; bad names; a killed
# peer; an early end that leaves no shm region behind (run's and links'); links; topo.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
# channel_bench: the channel micro-benchmark's raw provider rows (skipped where it is not built).
set(ccbench_channel_bench_path "")
if(TARGET ccbench_channel_bench)
  set(ccbench_channel_bench_path $<TARGET_FILE:ccbench_channel_bench>)
endif()
foreach(case run:tcp:rma:2:1 run:shm:rma:3:1 run:tcp:tagged:4:2 run:shm:tagged:2:1 run:default:rma:5:2
             shm_without_cma:2 bad_names killed_peer:tcp killed_peer:shm early_end_shm links links_early_end_shm topo
             channel_bench)
  string(REPLACE ":" "_" name ${case})
  add_test(NAME mpi.ofi.${name}
           COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/ofi_runs.py --ccbench $<TARGET_FILE:ccbench>
                   --mpiexec ${MPIEXEC_EXECUTABLE} --workdir ${CMAKE_CURRENT_BINARY_DIR}/ofi-runs
                   --channel-bench=${ccbench_channel_bench_path} ${case})
  set_tests_properties(mpi.ofi.${name} PROPERTIES LABELS "mpi;ofi" TIMEOUT 300 PROCESSORS 2 SKIP_RETURN_CODE 77)
endforeach()
