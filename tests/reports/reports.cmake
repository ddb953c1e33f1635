# accept, compare and report from the command line (tests/reports/*.sh).
add_test(NAME reports.accept_junit
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/accept_junit.sh $<TARGET_FILE:ccbench> ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/accept_junit)
set_tests_properties(reports.accept_junit PROPERTIES LABELS unit TIMEOUT 60)
# accept at a limit (equal passes, just past fails) and a wrong row within max_wrong (fails).
add_test(NAME reports.accept_boundaries
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/accept_boundaries.py $<TARGET_FILE:ccbench>
                 ${CMAKE_CURRENT_BINARY_DIR}/accept_boundaries)
set_tests_properties(reports.accept_boundaries PROPERTIES LABELS unit TIMEOUT 60)
# compare's detection power on a real pair of runs: a whole-run slowdown is the run's one failure,
# 2x and 1.6x slowdowns of one case are flagged on its rows of normal and low noise, the pair
# itself is not (tests/reports/compare_detection.py).
set(_np4_runs ${PROJECT_SOURCE_DIR}/tests/fixtures/cpu2core-20261130-np4-np8)
add_test(NAME reports.compare_detection
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/compare_detection.py $<TARGET_FILE:ccbench>
                 ${_np4_runs}/np4-run1-results.csv ${_np4_runs}/np4-run2-results.csv
                 ${CMAKE_CURRENT_BINARY_DIR}/compare_detection)
set_tests_properties(reports.compare_detection PROPERTIES LABELS unit TIMEOUT 60)
# More: a 2x slowdown flagged on every row whose two runs agree on the median, however its spread
# (a few slow iterations inflate time_cv and p95, not the median, nor the median over the fastest
# iteration that compare takes for a row's spread).
add_test(NAME reports.compare_detection_stable_medians
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/compare_detection.py $<TARGET_FILE:ccbench>
                 ${_np4_runs}/np4-run1-results.csv ${_np4_runs}/np4-run2-results.csv
                 ${CMAKE_CURRENT_BINARY_DIR}/compare_detection_stable --stable-medians)
set_tests_properties(reports.compare_detection_stable_medians PROPERTIES LABELS unit TIMEOUT 60)
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
# Prometheus metrics (results/metrics.h) as the monitoring stack reads them: promtool's linter and
# a real prometheus-node-exporter serving the .prom files (tests/reports/metrics_e2e.py); skipped
# (exit 77) without the prometheus and prometheus-node-exporter packages.
add_test(NAME reports.metrics_export
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/metrics_e2e.py export $<TARGET_FILE:ccbench>
                 ${MPIEXEC_EXECUTABLE} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/metrics_export)
set_tests_properties(reports.metrics_export PROPERTIES LABELS "unit;prometheus" TIMEOUT 120 SKIP_RETURN_CODE 77)
add_test(NAME mpi.metrics_run
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/metrics_e2e.py run $<TARGET_FILE:ccbench>
                 ${MPIEXEC_EXECUTABLE} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/metrics_run)
set_tests_properties(mpi.metrics_run PROPERTIES LABELS "mpi;prometheus" TIMEOUT 300 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
