# Training conditions on CPU ranks (label mpi): fp8 rows exact and a corrupted fp8 element found,
# --overlap refused with the reason, --energy not available with the reason, --nccl-config's NCCL
# rows skipped (tests/mpi/training_cpu.py). The GPU side: tests/gpu/gpu1_tests.cmake.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME mpi.training_cpu
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/training_cpu.py --ccbench $<TARGET_FILE:ccbench>
                 --mpiexec ${MPIEXEC_EXECUTABLE})
set_tests_properties(mpi.training_cpu PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 2)
