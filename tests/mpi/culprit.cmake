# Fleet acceptance names the slow host (tests/mpi/culprit_tests.py): 4 CPU ranks on 4 emulated
# nodes, one of them made slow by CCBENCH_FAULT=slow, chosen at random by the test: named by
# `links` (in rounds and --serial), by --groups pairs, by accept over both, by --groups bisect.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  foreach(case links pairs accept bisect refusals)
    add_test(NAME mpi.culprit_${case}
             COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/mpi/culprit_tests.py ${MPIEXEC_EXECUTABLE}
                     $<TARGET_FILE:ccbench> ${CMAKE_CURRENT_BINARY_DIR} ${case})
    set_tests_properties(mpi.culprit_${case} PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE)
  endforeach()
endif()
