# Health telemetry through the real binary (label mpi): recorded NVML answers played back and a
# fake NIC sysfs tree; checks the health columns, run.json's context, the series, the warnings
# and --fail-on-health.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME mpi.telemetry
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/telemetry_run.py --ccbench $<TARGET_FILE:ccbench>
                 --mpiexec ${MPIEXEC_EXECUTABLE} --fixture ${CMAKE_CURRENT_LIST_DIR}/../fixtures/nvml-h200x2-healthy.json
                 --recorded ${CMAKE_CURRENT_LIST_DIR}/../fixtures/nvml-h200x2-recorded.json)
set_tests_properties(mpi.telemetry PROPERTIES LABELS mpi TIMEOUT 600 PROCESSORS 2)
