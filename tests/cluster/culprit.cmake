# The cluster tier (label cluster): fleet acceptance on 4 hosts of a cluster in a box, one of them
# chosen at random and shaped to 1 Gbit, named by links, --groups pairs, accept and the culprit
# search (tests/cluster/culprit_box.py). Skipped with the fixture's reason where the machine
# cannot host the box (no root, no namespaces, no tc).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  add_test(NAME cluster.culprit
           COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/cluster/culprit_box.py $<TARGET_FILE:ccbench>
                   ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(cluster.culprit PROPERTIES LABELS cluster TIMEOUT 300 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
endif()
