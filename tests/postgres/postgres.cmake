# PostgreSQL as a results store (label postgres), each test against a server it starts itself
# (tests/postgres/pg_server.py: initdb and postgres in a temporary folder, a Unix socket and
# 127.0.0.1 at a random free port, stopped and removed afterwards). Skipped with the reason (exit
# 77) where the server's binaries are absent, or where this build has no libpq.
set(_pg_server ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/pg_server.py)
if(CCBENCH_HAVE_POSTGRESQL)
  add_executable(ccbench_postgres_tests ${CMAKE_CURRENT_LIST_DIR}/test_store_postgres.cpp)
  target_link_libraries(ccbench_postgres_tests PRIVATE ccbench_results GTest::gtest_main PkgConfig::LIBPQ)
  target_compile_options(ccbench_postgres_tests PRIVATE $<$<CONFIG:Release>:-O1>)
  # The verbs, one copy per run, 16 writers at once with a reader, migrations, foreign and newer
  # schemas, credentials and connection failures, through the C++ interface.
  add_test(NAME postgres.store COMMAND ${_pg_server} -- $<TARGET_FILE:ccbench_postgres_tests>)
  # The same end-to-end script as mpi.history_two_jobs with the store on the server: two real jobs
  # appending at once, list, trend, --against-fleet.
  add_test(NAME postgres.history_two_jobs
           COMMAND ${_pg_server} --databases e2e,fleet -- bash ${PROJECT_SOURCE_DIR}/tests/reports/history_e2e.sh
                   ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:ccbench> ${CMAKE_CURRENT_BINARY_DIR}/postgres_e2e postgres)
  # The command line: imports keeping verdicts, a run added twice, secrets never printed nor
  # recorded, failed connections (exit 3), 16 processes adding at once with a reader (and the
  # same against an SQLite file on the local disk).
  add_test(NAME postgres.history_cli
           COMMAND ${_pg_server} -- ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/history_postgres.py
                   $<TARGET_FILE:ccbench> ${MPIEXEC_EXECUTABLE} ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/postgres_cli)
  set(_pg_tests postgres.store postgres.history_two_jobs postgres.history_cli)
else()
  add_test(NAME postgres.store COMMAND sh -c "echo 'SKIPPED: ccbench was built without PostgreSQL (libpq-dev was \
missing at configure time; CCBENCH_WITH_POSTGRESQL)'; exit 77")
  set(_pg_tests postgres.store)
endif()
set_tests_properties(${_pg_tests} PROPERTIES LABELS postgres SKIP_RETURN_CODE 77 TIMEOUT 180 RUN_SERIAL TRUE)
