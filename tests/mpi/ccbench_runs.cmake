# The real binary under mpirun on CPU ranks, each run decided by tests/check_results.py: the exit
# code, the case set the arguments ask for (every row there, in order, nothing else, each skip for
# an allowed reason), busbw against the bus factor, every row's status and wrong count in
# results.csv and run.json, and the footer on stdout.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(_check_results ${CMAKE_CURRENT_LIST_DIR}/../check_results.py)
# ccbench_checked_run(NAME RANKS "CHECK OPTIONS" ccbench arguments...); results in the build tree.
function(ccbench_checked_run name np check_options)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name})
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${_check_results} --dir ${dir} ${check_options} --
                   ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root -np ${np} $<TARGET_FILE:ccbench>
                   ${ARGN} --out ${dir})
  set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 600 RUN_SERIAL TRUE)
endfunction()

# Every collective x CPU implementation x dtype x op over sizes from one element up to a few MiB
# (counts not divisible by the ranks included), with the root of rooted collectives away from rank 0.
# At 2 ranks up to 1.3 MiB (several slots per step); at 3-5 ranks, and under the sanitizers, up to
# 54 KiB: the 1.3 MiB size took about 90 % of such a run, the 5 MiB run below covers several slots
# at 3 ranks, and mpi.cpu_collectives covers them with 1 KiB and 4 KiB slots under the sanitizers.
foreach(np 2 3 4 5)
  math(EXPR root "${np} / 2")
  set(largest 2M)
  if(np GREATER 2 OR CCBENCH_SANITIZE)
    set(largest 64K)
  endif()
  set(args --device cpu --collective all --impl mpi,ring,tree,direct -d all -o all -b 4 -e ${largest} -f 24
           -n 2 -w 1 --root ${root} --timeout 60)
  ccbench_checked_run(mpi.ccbench_all_cases.np${np} ${np} "--unchecked;none" ${args})
  if(np EQUAL 2)
    set(_all_cases_np2_args ${args})
  endif()
endforeach()
# The np2 run's files, edited as a regression would leave them (tree rows gone, ring rows
# skipped, half the rows cut, a row twice, busbw with the wrong bus factor ...): check_results.py
# must reject every edit and pass the untouched copy (tests/mpi/check_results_rejects_edits.py).
set_tests_properties(mpi.ccbench_all_cases.np2 PROPERTIES FIXTURES_SETUP all_cases_np2)
add_test(NAME mpi.check_results_rejects_edits
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_results_rejects_edits.py --check-results ${_check_results}
                 --dir ${CMAKE_CURRENT_BINARY_DIR}/mpi.ccbench_all_cases.np2 --
                 ${MPIEXEC_EXECUTABLE} -np 2 $<TARGET_FILE:ccbench> ${_all_cases_np2_args})
set_tests_properties(mpi.check_results_rejects_edits PROPERTIES LABELS mpi TIMEOUT 300 FIXTURES_REQUIRED all_cases_np2)
# The real binary over the tcp transport: element sizes 1, 2, 4 and 8 (the reductions themselves
# are transport-independent and run for every dtype and op above).
ccbench_checked_run(mpi.tcp.ccbench_np3 3 "--unchecked;none"
                    --device cpu --transport tcp --impl ring,tree --collective allreduce,allgather
                    -d int8,bfloat16,float,float64 -o sum,max -b 4 -e 1M -f 7 --timeout 60)
# Several MiB with a count not divisible by the ranks (5 MiB of float over 3 ranks).
ccbench_checked_run(mpi.ccbench_large.np3 3 "--unchecked;none"
                    --device cpu --collective all --impl mpi,ring,tree,direct -d float,int8 -o sum,max -b 5M -e 5M -n 2 -w 1
                    --timeout 60)
# The precision pattern (values that need each floating type's whole mantissa and range, signed
# zeros, NaN, subnormals) through every reducing collective of mpi, ring and tree, every floating
# dtype and op, at 2, 3 and 5 ranks. The mpi rows are the MPI library's own MPI_MAX, MPI_MIN and
# MPI_SUM on double and float: exact rows there say MPI agrees bit for bit with the expected values
# (themselves held to the independent reference by the unit tests), a third opinion on ours.
foreach(np 2 3 5)
  ccbench_checked_run(mpi.ccbench_precision.np${np} ${np} "--unchecked;none"
                      --device cpu --collective allreduce,reducescatter,reduce --impl mpi,ring,tree --pattern precision
                      -d double,float,half,bfloat16,f8e4m3,f8e5m2 -o all -b 8 -e 64K -f 32 -n 2 -w 1 --timeout 60)
endforeach()
# The default run (no arguments but the largest size) on 4 CPU ranks: the table, the files.
ccbench_checked_run(mpi.ccbench_default_run 4 "--unchecked;none" -e 1M)
# -c 0: every measured row is "not checked" (empty wrong count, N/A in the table), and the footer
# counts them apart instead of summing a marker.
ccbench_checked_run(mpi.ccbench_unchecked 2 "--unchecked;all"
                    --device cpu --collective allreduce,allgather,reducescatter --impl ring,mpi -b 8 -e 64K -f 8
                    -n 2 -w 1 -c 0 --timeout 60)
# -u 3: send and receive buffers three elements into their allocations, every collective checked
# and the guard regions around the offset intact.
ccbench_checked_run(mpi.ccbench_misaligned.np3 3 "--unchecked;none"
                    --device cpu --collective all --impl mpi,ring,tree -d float,int8,double -o sum -b 4 -e 1M -f 13
                    -u 3 -n 2 -w 1 --timeout 60)
# --groups rails over 2 emulated nodes of 2: rail0 (ranks 0, 2) and rail1 (1, 3) measured at the
# same time, each a full case set of 2-rank rows whose busbw uses the bus factor of 2 ranks.
ccbench_checked_run(mpi.ccbench_groups_rails 4 "--unchecked;none"
                    --device cpu --collective allreduce,allgather,reducescatter,broadcast --impl ring,mpi
                    -d float,int32 -o sum -b 4 -e 64K -f 16 -n 2 -w 1 --root 1 --groups rails --emulate-nodes 2
                    --timeout 60)
# -a 0, 1 and 2 (rank 0's, the mean or the fastest rank's time instead of the slowest's).
foreach(a 0 1 2)
  ccbench_checked_run(mpi.ccbench_rank_time_a${a} 2 "--unchecked;none"
                      --device cpu --collective allreduce --impl ring -b 8 -e 64K -f 8 -n 2 -w 1 -a ${a} --timeout 60)
endforeach()

# The summary lines after the table, for each output choice (tests/mpi/summary_lines.py).
foreach(scenario per_case comparison csv_only table_only out_none_file)
  add_test(NAME mpi.summary.${scenario}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/summary_lines.py --ccbench $<TARGET_FILE:ccbench>
                   --mpiexec ${MPIEXEC_EXECUTABLE} ${scenario})
  set_tests_properties(mpi.summary.${scenario} PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2)
endforeach()
