# The real binary under mpirun on CPU ranks: every collective x CPU implementation x dtype x op
# over sizes from one element up to a few MiB (counts not divisible by the ranks included), with
# the root of rooted collectives away from rank 0, checked by ccbench itself: exit code 0 means no
# wrong element, no damaged guard.
foreach(np 2 3 4 5)
  math(EXPR root "${np} / 2")
  add_test(NAME mpi.ccbench_all_cases.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root -np ${np} $<TARGET_FILE:ccbench>
                   --device cpu --collective all --impl mpi,ring,tree,direct -d all -o all -b 4 -e 2M -f 24 -n 2
                   -w 1 --root ${root} --out none --format csv --timeout 60)
  set_tests_properties(mpi.ccbench_all_cases.np${np} PROPERTIES LABELS mpi TIMEOUT 600 RUN_SERIAL TRUE)
endforeach()
# Several MiB with a count not divisible by the ranks (5 MiB of float over 3 ranks).
add_test(NAME mpi.ccbench_large.np3
         COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root -np 3 $<TARGET_FILE:ccbench>
                 --device cpu --collective all --impl mpi,ring,tree,direct -d float,int8 -o sum,max -b 5M -e 5M -n 2 -w 1
                 --out none --format csv --timeout 60)
set_tests_properties(mpi.ccbench_large.np3 PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE)
# The default run (no arguments) on 4 CPU ranks prints the table and writes the files.
add_test(NAME mpi.ccbench_default_run
         COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root -np 4 $<TARGET_FILE:ccbench> -e 1M
                 --out ${CMAKE_CURRENT_BINARY_DIR}/default-run)
set_tests_properties(mpi.ccbench_default_run PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE
                     PASS_REGULAR_EXPRESSION "Result: OK.*results: .*default-run")
