# `ccbench links` on CPU ranks (tests/mpi/links_tests.py): the matrix and its files, several
# transports and all pairs at once, bad input, `--transport ib` without a device (exit 3), the
# efficiency and model columns of a run (measured ceilings, --model; 2 emulated nodes over tcp with the tcp ceiling as
# their NIC; CPU hier over emulated nodes), acceptance rules on those columns of a real run
# (accept_references), per-link verdicts from links.csv and --groups pairs (link_verdicts), and the RDMA hardware case
# (label rdma; skipped with the reason where there is no RDMA device).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  foreach(case matrix transports bad_input ib_missing efficiency model model_hier accept_references link_verdicts)
    add_test(NAME mpi.links_${case}
             COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/mpi/links_tests.py ${MPIEXEC_EXECUTABLE}
                     $<TARGET_FILE:ccbench> ${CMAKE_CURRENT_BINARY_DIR} ${case})
    set_tests_properties(mpi.links_${case} PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
  endforeach()
  add_test(NAME rdma.links_ib
           COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/mpi/links_tests.py ${MPIEXEC_EXECUTABLE}
                   $<TARGET_FILE:ccbench> ${CMAKE_CURRENT_BINARY_DIR} rdma)
  set_tests_properties(rdma.links_ib PROPERTIES LABELS rdma TIMEOUT 300 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
endif()
