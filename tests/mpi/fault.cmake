# Fault tests (labels mpi, reliability): 2 CPU ranks under mpirun with CCBENCH_FAULT (a stopped,
# killed, slow or failing rank, a wrong element, a write past the buffer), checked for the exit
# code, the time the job took, the message and the result files (tests/mpi/fault_tests.py).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
foreach(scenario stop_ring stop_tree stop_mpi kill corrupt_ring corrupt_tree corrupt_mpi overrun overrun_unchecked alloc delay delay_rank_time
                 soak_clean soak_corrupt mismatch terminate straggler group_pairs group_node
                 group_stop_serial group_stop_together group_long_round)
  add_test(NAME mpi.fault.${scenario}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/fault_tests.py --ccbench $<TARGET_FILE:ccbench>
                   --mpiexec ${MPIEXEC_EXECUTABLE} ${scenario})
  # Alone on the machine: the stop and delay scenarios check how long the job took.
  set_tests_properties(mpi.fault.${scenario} PROPERTIES LABELS "mpi;reliability" TIMEOUT 180 PROCESSORS 2)
endforeach()
