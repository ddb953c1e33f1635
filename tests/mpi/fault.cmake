# Fault tests (labels mpi, reliability): 2 CPU ranks under mpirun with CCBENCH_FAULT (a stopped,
# killed, slow or failing rank, a wrong element, a written send buffer, a write past the buffer),
# checked for the exit code, the time the job took against the bound docs/reliability.md states,
# the message and the result files (tests/mpi/fault_tests.py).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
foreach(scenario stop_ring stop_tree stop_mpi kill corrupt_ring corrupt_tree corrupt_mpi corrupt_send_ring
                 corrupt_send_mpi overrun overrun_unchecked alloc delay delay_rank_time known_time known_time_aggregated
                 soak_clean soak_corrupt mismatch
                 terminate straggler straggler_threshold group_pairs group_node group_outlier_threshold
                 group_stop_serial group_stop_together group_long_round)
  add_test(NAME mpi.fault.${scenario}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/fault_tests.py --ccbench $<TARGET_FILE:ccbench>
                   --mpiexec ${MPIEXEC_EXECUTABLE} ${scenario})
  # Alone on the machine: the stop and delay scenarios check how long the job took.
  set_tests_properties(mpi.fault.${scenario} PROPERTIES LABELS "mpi;reliability" TIMEOUT 180 PROCESSORS 2)
endforeach()

# The timing held to a known answer on one GPU: a rank whose every call ends 200 ms late, in eager
# rows and CUDA-graph replays (fault_tests.py known_time; labels gpu, gpu1).
foreach(scenario known_time known_time_aggregated)
  add_test(NAME gpu1_${scenario}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/fault_tests.py --ccbench $<TARGET_FILE:ccbench>
                   --mpiexec ${MPIEXEC_EXECUTABLE} --gpu ${scenario})
  set_tests_properties(gpu1_${scenario} PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 180 RUN_SERIAL TRUE)
endforeach()

# How a job ends when its output or its start goes wrong: two launches into one --out (and two
# into one new folder at once, 20 times: one winner, its folder intact), a fault that could never
# fire as given, a deadline too short for the work asked, rank 0 stopped from outside, a results
# file in the way, a full disk (a tmpfs in a mount namespace of its own: skipped where none can be
# mounted), a usage error whichever rank exits first, a fault rank or -r outside the run, SIGTERM
# through mpirun, verdicts that end the run; each checked for the exit code, the time, the message
# said once and the files (fault_tests.py).
foreach(scenario results_folder_taken out_race results_csv_unwritable tmp_name_taken full_disk usage_error_any_rank
                 fault_rank_out_of_range fault_beyond_the_run root_out_of_range terminate_quiet verdicts_quiet
                 deadline_too_short stopped_from_outside)
  add_test(NAME mpi.fault.${scenario}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/fault_tests.py --ccbench $<TARGET_FILE:ccbench>
                   --mpiexec ${MPIEXEC_EXECUTABLE} ${scenario})
  set_tests_properties(mpi.fault.${scenario} PROPERTIES LABELS "mpi;reliability" TIMEOUT 180 PROCESSORS 2
                       SKIP_RETURN_CODE 77)
endforeach()

# A tuning variable on one rank only: exit 2 at start-up, naming the ranks (tuning_agreement.py);
# on ranks sharing a GPU (labels gpu, gpu1) with the GPU kernels' channel and slot knobs.
add_test(NAME mpi.agreement.cpu_slot_bytes
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/tuning_agreement.py --ccbench $<TARGET_FILE:ccbench>
                 --mpiexec ${MPIEXEC_EXECUTABLE} CCBENCH_CPU_SLOT_BYTES=256K)
set_tests_properties(mpi.agreement.cpu_slot_bytes PROPERTIES LABELS "mpi;reliability" TIMEOUT 120 PROCESSORS 2)
foreach(setting CCBENCH_GPU_CHANNELS=2 CCBENCH_GPU_SLOT_BYTES=256K)
  string(REGEX REPLACE "=.*" "" name ${setting})
  add_test(NAME gpu1_agreement_${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/tuning_agreement.py --ccbench $<TARGET_FILE:ccbench>
                   --mpiexec ${MPIEXEC_EXECUTABLE} --gpu ${setting})
  set_tests_properties(gpu1_agreement_${name} PROPERTIES LABELS "gpu;gpu1" SKIP_RETURN_CODE 77 TIMEOUT 120 RUN_SERIAL TRUE)
endforeach()
