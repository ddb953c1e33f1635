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
