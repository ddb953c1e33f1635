# nccl-tests command lines, the start-up block, the progress line, NCCL_TESTS_MIN_BW and -m N
# (rows checked, times per collective) through the real binary (label mpi): mpirun -np 2 on CPU ranks.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME mpi.cli_runs
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_runs.py --ccbench $<TARGET_FILE:ccbench>
                 --mpiexec ${MPIEXEC_EXECUTABLE})
set_tests_properties(mpi.cli_runs PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 2)
