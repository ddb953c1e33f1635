# accept, compare and report from the command line (tests/reports/*.sh).
add_test(NAME reports.accept_junit
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/accept_junit.sh $<TARGET_FILE:ccbench> ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/accept_junit)
set_tests_properties(reports.accept_junit PROPERTIES LABELS unit TIMEOUT 60)
add_test(NAME mpi.compare_two_real_runs
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/compare_e2e.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:ccbench>
                 ${CMAKE_CURRENT_BINARY_DIR}/compare_e2e)
set_tests_properties(mpi.compare_two_real_runs PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE)
# The HTML report in a real browser: skipped (exit 77, with the reason) without chromium.
add_test(NAME reports.report_in_browser
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report_browser.sh $<TARGET_FILE:ccbench> ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/report_browser)
set_tests_properties(reports.report_in_browser PROPERTIES LABELS "unit;browser" TIMEOUT 300 SKIP_RETURN_CODE 77)
add_test(NAME mpi.history_two_jobs
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/history_e2e.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:ccbench>
                 ${CMAKE_CURRENT_BINARY_DIR}/history_e2e)
set_tests_properties(mpi.history_two_jobs PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE)
add_test(NAME reports.damaged_values
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/damaged_values.sh $<TARGET_FILE:ccbench> ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/damaged_values)
set_tests_properties(reports.damaged_values PROPERTIES LABELS unit TIMEOUT 120)
add_test(NAME reports.history_cli
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/history_cli.sh $<TARGET_FILE:ccbench> ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/history_cli)
set_tests_properties(reports.history_cli PROPERTIES LABELS unit TIMEOUT 120)
# scripts/report.py and plot.py on damaged and foreign input, and escaping (matplotlib for that
# part: skipped, exit 77, where no interpreter has it).
add_test(NAME reports.report_inputs
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report_inputs.sh ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/report_inputs)
set_tests_properties(reports.report_inputs PROPERTIES LABELS unit TIMEOUT 180 SKIP_RETURN_CODE 77)
