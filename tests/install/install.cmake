# The installation (label install): cmake --install into a temporary prefix, the installed
# ccbench run on 2 ranks and through the installed Slurm script, and the .deb from cpack.
add_test(NAME install.prefix_and_deb
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install_test.sh ${CMAKE_BINARY_DIR} ${MPIEXEC_EXECUTABLE})
set_tests_properties(install.prefix_and_deb PROPERTIES LABELS install TIMEOUT 300 RUN_SERIAL TRUE)
