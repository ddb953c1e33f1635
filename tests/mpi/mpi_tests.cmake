# MPI tests (label mpi): each runs under mpirun with N ranks. Ranks may outnumber cores (CI has
# two): the CPU implementations then yield instead of spinning.
add_executable(ccbench_cpu_collectives_test ${CMAKE_CURRENT_LIST_DIR}/cpu_collectives_test.cpp)
target_link_libraries(ccbench_cpu_collectives_test PRIVATE ccbench_collectives)

foreach(np 1 2 3 4 5)
  add_test(NAME mpi.cpu_collectives.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} ${np}
                   ${MPIEXEC_PREFLAGS} $<TARGET_FILE:ccbench_cpu_collectives_test> ${MPIEXEC_POSTFLAGS})
  # PROCESSORS keeps ctest -j from running two of them at once on a small machine.
  set_tests_properties(mpi.cpu_collectives.np${np} PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS ${np})
endforeach()

# The tcp transport: protocol hardening and failures (tcp_test), and the real binary over tcp.
add_executable(ccbench_tcp_test ${CMAKE_CURRENT_LIST_DIR}/tcp_test.cpp)
target_link_libraries(ccbench_tcp_test PRIVATE ccbench_transports)
foreach(np 2 3 4)
  add_test(NAME mpi.tcp.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} ${np}
                   ${MPIEXEC_PREFLAGS} $<TARGET_FILE:ccbench_tcp_test> ${MPIEXEC_POSTFLAGS})
  set_tests_properties(mpi.tcp.np${np} PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS ${np})
endforeach()
# mpi.tcp.ccbench_np3 (the real binary over tcp) is in ccbench_runs.cmake, with the other checked runs.
add_test(NAME mpi.tcp.bad_interface
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/tcp_bad_interface.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:ccbench>)
set_tests_properties(mpi.tcp.bad_interface PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2)

# ccbench topo: gathered once, topology.json, --expect differences (exit 4) and a bad file (exit 2).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME mpi.topology
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/topo_runs.py $<TARGET_FILE:ccbench> ${MPIEXEC_EXECUTABLE})
set_tests_properties(mpi.topology PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2)

# A set-up step failing on some ranks (a refused CUDA IPC mapping, transports/agreement.h) ends on
# every rank at once with one error naming the rank, and the harness gives it once. Decided by
# tests/expect_run.py: exit code 0 and the "ok" line.
add_executable(ccbench_set_up_agreement_test ${CMAKE_CURRENT_LIST_DIR}/set_up_agreement_test.cpp)
target_link_libraries(ccbench_set_up_agreement_test PRIVATE ccbench_harness_lib)
foreach(np 3 5)
  add_test(NAME mpi.set_up_agreement.np${np}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/../expect_run.py
                   --output "^set-up agreement: ${np} ranks, [0-9]+ checks per rank: ok$" --
                   ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} ${np}
                   $<TARGET_FILE:ccbench_set_up_agreement_test>)
  set_tests_properties(mpi.set_up_agreement.np${np} PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS ${np})
endforeach()
