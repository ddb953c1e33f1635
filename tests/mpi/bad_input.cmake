# Bad-input matrix (labels mpi, reliability): every flag, size string, environment variable, CSV
# input and output path in invalid forms, each a real ccbench launch (mpirun -np 2, some plain),
# checked for the exit code, the message and that nothing ran before the input was judged.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME mpi.bad_input
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/bad_input.py --ccbench $<TARGET_FILE:ccbench>
                 --mpiexec ${MPIEXEC_EXECUTABLE} --golden ${CMAKE_CURRENT_LIST_DIR}/../golden/results.csv --jobs 4)
# Four launches at a time: a launch mostly waits for mpirun's start-up (on 2 cores: 44 s with 4
# against 87 s with 2); PROCESSORS keeps ctest -j from adding more on a small machine.
set_tests_properties(mpi.bad_input PROPERTIES LABELS "mpi;reliability" TIMEOUT 900 PROCESSORS 2)
