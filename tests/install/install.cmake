# The installation (label install): cmake --install into a temporary prefix, the installed
# ccbench run on 2 ranks and through the installed Slurm script, and the .deb from cpack.
add_test(NAME install.prefix_and_deb
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install_test.sh ${CMAKE_BINARY_DIR} ${MPIEXEC_EXECUTABLE})
set_tests_properties(install.prefix_and_deb PROPERTIES LABELS install TIMEOUT 300 RUN_SERIAL TRUE)
# The user's journey on the installed copy with the source and build trees out of reach
# (tests/install/journey.sh): benchmark, links, pairs, accept with shipped rules, compare,
# history, model and the report under a python3 that lacks the tools' packages.
add_test(NAME install.journey
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/journey.sh ${CMAKE_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_SOURCE_DIR})
set_tests_properties(install.journey PROPERTIES LABELS install TIMEOUT 600 RUN_SERIAL TRUE)
