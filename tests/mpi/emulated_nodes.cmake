# Emulated nodes and --transport on CPU ranks (labels mpi): real launches, rows and messages checked.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME mpi.emulated_nodes
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/emulated_nodes.py --ccbench $<TARGET_FILE:ccbench>
                 --mpiexec ${MPIEXEC_EXECUTABLE} --paths ${CMAKE_CURRENT_LIST_DIR}/../../scripts/paths.sh)
set_tests_properties(mpi.emulated_nodes PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 2 RUN_SERIAL TRUE)
