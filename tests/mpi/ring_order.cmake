# Logical topologies on CPU ranks (label mpi): exact results over reordered rings (--ring-order),
# one binary tree (--tree binary) and the hier all-reduce over emulated nodes (check_results.py);
# the order and tree in run.json and on stdout; bad orders refused (exit 2).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME mpi.ring_order
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ring_order.py --ccbench $<TARGET_FILE:ccbench>
                 --mpiexec ${MPIEXEC_EXECUTABLE} --check-results ${CMAKE_CURRENT_LIST_DIR}/../check_results.py)
set_tests_properties(mpi.ring_order PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 2 RUN_SERIAL TRUE)
