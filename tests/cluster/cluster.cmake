# The cluster tier (label cluster): ccbench across hosts of a cluster in a box
# (scripts/cluster-in-a-box.sh: network, UTS and mount namespaces on a bridge, tc for rate and
# loss, a real Slurm), each case in tests/cluster/cluster_tests.py. Each test brings its box up and
# takes it down, also when it fails; where this machine cannot host one (not root, no namespaces,
# tc or packages missing) the test is skipped with the reason. cluster.leftovers runs after them
# (a ctest fixture's cleanup) and fails on any namespace or folder a box of this build left.
# RUN_SERIAL: the hosts share the machine's cores, and the timing checks (a cut link's end, the
# shaped rate) assume nothing else runs. TIMEOUT 600 (the tests' own deadline 570 s) leaves room
# for a loaded machine: on the shared 2-core build machine at a load average of 15 one test took
# up to 230 s.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(_cluster_tests ${CMAKE_CURRENT_LIST_DIR}/cluster_tests.py)
foreach(case collectives:tcp collectives:ofi collectives:mpi groups links_topo interface loss cut:ring cut:mpi slurm
             shaped fleet_store)
  string(REPLACE ":" "_" name ${case})
  add_test(NAME cluster.${name}
           COMMAND ${Python3_EXECUTABLE} ${_cluster_tests} --ccbench $<TARGET_FILE:ccbench> --build ${CMAKE_BINARY_DIR}
                   ${case})
  set_tests_properties(cluster.${name} PROPERTIES LABELS cluster TIMEOUT 600 RUN_SERIAL TRUE SKIP_RETURN_CODE 77
                       FIXTURES_REQUIRED cluster_boxes)
endforeach()
add_test(NAME cluster.leftovers
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/leftovers.py ${CMAKE_BINARY_DIR})
set_tests_properties(cluster.leftovers PROPERTIES LABELS cluster TIMEOUT 60 FIXTURES_CLEANUP cluster_boxes)
