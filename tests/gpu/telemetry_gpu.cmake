# Health telemetry on real GPUs (label gpu; skipped with the reason where there is none): NVML's
# answers reach every row's health columns, run.json's context and the series.
ccbench_gpu_test(gpu_telemetry_2 2 --collective allreduce --impl nccl,ring -b 8 -e 256M -f 32 -n 20 -w 2
                 --telemetry on --telemetry-interval 20 --timeout 60)
set_tests_properties(gpu_telemetry_2 PROPERTIES
                     ENVIRONMENT CCBENCH_RESULT_CHECK=${CMAKE_CURRENT_LIST_DIR}/telemetry_check.py)
