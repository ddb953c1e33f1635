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

# ccbench_mpi_checks_test(<name> <source> <title> <np>...): an MPI test program of
# tests/mpi/mpi_checks.h (mpi_checks::main_of), run on each number of ranks as mpi.<name>.np<N>;
# decided by tests/expect_run.py: exit code 0 and the "<title>: N ranks, C checks per rank: ok" line.
function(ccbench_mpi_checks_test name source title)
  string(REPLACE "." "_" target "ccbench_${name}_test")
  add_executable(${target} ${CMAKE_CURRENT_LIST_DIR}/${source})
  target_link_libraries(${target} PRIVATE ccbench_harness_lib)
  foreach(np IN LISTS ARGN)
    add_test(NAME mpi.${name}.np${np}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/../expect_run.py
                     --output "^${title}: ${np} ranks, [0-9]+ checks per rank: ok$" --
                     ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root ${MPIEXEC_NUMPROC_FLAG} ${np}
                     $<TARGET_FILE:${target}>)
    set_tests_properties(mpi.${name}.np${np} PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS ${np})
  endforeach()
endfunction()

# A set-up step failing on some ranks (a refused CUDA IPC mapping, transports/agreement.h) ends on
# every rank at once with one error naming the rank, and the harness gives it once.
ccbench_mpi_checks_test(set_up_agreement set_up_agreement_test.cpp "set-up agreement" 3 5)
# The Runner's hook contract (harness/engine/runner_hook.h) on CPU ranks: the calls in order on
# every rank, skipped and failed rows, a hook's own phase and its collective end_row().
ccbench_mpi_checks_test(runner_hooks runner_hooks_test.cpp "runner hooks" 2 3)
