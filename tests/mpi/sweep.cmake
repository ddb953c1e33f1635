# scripts/sweep.py with CPU ranks (label mpi): a settings grid merged and summarised, the effect
# check on a misspelled variable, bad --sweep-env input; the tuner (halving, budget, env file, bad
# space), one launch per setting; then identical settings with the default 3 launches each beside
# a busy process: no gain reported. 23 short launches.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME mpi.sweep
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_test.py --ccbench $<TARGET_FILE:ccbench>
                 --mpiexec ${MPIEXEC_EXECUTABLE} --sweep ${CMAKE_CURRENT_LIST_DIR}/../../scripts/sweep.py
                 --tune ${CMAKE_CURRENT_LIST_DIR}/../../scripts/tune.py)
set_tests_properties(mpi.sweep PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 2 RUN_SERIAL TRUE)
