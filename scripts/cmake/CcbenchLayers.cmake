# The layers, kept by the linker. tests/lint/layers.py is the rule (which folder may use which;
# `layers.py --cmake` prints it for this file); ccbench_layer() says which libraries make up a
# folder. ccbench_link_layers() then, for every folder:
#  - at configure time, refuses a library of the folder that links a ccbench library of a folder
#    its row does not allow (an upward dependency declared in CMake);
#  - adds link_layer.<folder> (folder's "/" as "."), an executable that the normal build links:
#    all objects of the folder's libraries (WHOLE_ARCHIVE) against only the libraries of the
#    folders its row allows and the external ones. A call from the folder's code into a folder
#    above it (an upward dependency in the code) is then an "undefined reference" naming the
#    symbol, and the build fails. An executable rather than a shared library: the static
#    libraries are not position-independent, and an executable's link refuses undefined symbols
#    anyway (--no-undefined, given as well, says so for the reader).
# tests/lint/link_layers/ plants an upward call and checks that this link fails (ctest
# lint.link_layers_self_test).
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# ccbench_layer(<folder> <library>...): the libraries of one layer folder; names that are not
# targets in this build (CUDA kernels in a CPU-only build) are left out.
function(ccbench_layer folder)
  set(libs "")
  foreach(lib IN LISTS ARGN)
    if(TARGET ${lib})
      list(APPEND libs ${lib})
      set_property(GLOBAL PROPERTY CCBENCH_LAYER_OF_${lib} ${folder})
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY CCBENCH_LAYER_LIBS_${folder} ${libs})
  set_property(GLOBAL APPEND PROPERTY CCBENCH_LAYER_FOLDERS ${folder})
endfunction()

# ccbench_link_check(<name> LIBRARIES <lib>... USES <lib>...): an executable holding every object
# of LIBRARIES, linked against USES (and what they and LIBRARIES link). EXCLUDE_FROM_ALL: built
# only when asked for (the self-test's planted calls).
function(ccbench_link_check name)
  cmake_parse_arguments(arg "EXCLUDE_FROM_ALL" "" "LIBRARIES;USES" ${ARGN})
  set(exclude "")
  if(arg_EXCLUDE_FROM_ALL)
    set(exclude EXCLUDE_FROM_ALL)
  endif()
  add_executable(${name} ${exclude} ${CMAKE_SOURCE_DIR}/tests/lint/link_layers/link_check_main.cpp)
  foreach(lib IN LISTS arg_LIBRARIES)
    target_link_libraries(${name} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${lib}>")
    # The same library reached through another's dependencies is linked whole as well.
    set_property(TARGET ${name} PROPERTY LINK_LIBRARY_OVERRIDE_${lib} WHOLE_ARCHIVE)
  endforeach()
  target_link_libraries(${name} PRIVATE ${arg_USES})
  target_link_options(${name} PRIVATE LINKER:--no-undefined)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/link_layers)
endfunction()

# What tests/lint/layers.py allows each folder: variables _ccbench_allows_<folder>.
function(_ccbench_read_layer_table)
  execute_process(COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/lint/layers.py --cmake
                  OUTPUT_VARIABLE table RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tests/lint/layers.py --cmake failed (${rc})")
  endif()
  string(REPLACE "\n" ";" lines "${table}")
  set(folders "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^([^=]+)=(.*)$")
      list(APPEND folders ${CMAKE_MATCH_1})
      string(REPLACE "," ";" allowed "${CMAKE_MATCH_2}")
      set(_ccbench_allows_${CMAKE_MATCH_1} "${allowed}" PARENT_SCOPE)
    endif()
  endforeach()
  set(_ccbench_table_folders ${folders} PARENT_SCOPE)
endfunction()

# A library of `folder` may link (in CMake) only ccbench libraries of `folder` or of `allowed`.
function(_ccbench_check_declared folder allowed)
  list(JOIN allowed ", " allowed_text)
  get_property(libs GLOBAL PROPERTY CCBENCH_LAYER_LIBS_${folder})
  foreach(lib IN LISTS libs)
    get_target_property(deps ${lib} LINK_LIBRARIES)
    foreach(dep IN LISTS deps)
      get_property(dep_folder GLOBAL PROPERTY CCBENCH_LAYER_OF_${dep})
      if(dep_folder AND NOT dep_folder STREQUAL folder AND NOT dep_folder IN_LIST allowed)
        message(FATAL_ERROR "${lib} (${folder}/) links ${dep} (${dep_folder}/), a layer above it; "
                            "tests/lint/layers.py lets ${folder}/ use only: ${allowed_text}")
      endif()
    endforeach()
  endforeach()
endfunction()

function(ccbench_link_layers)
  _ccbench_read_layer_table()
  get_property(registered GLOBAL PROPERTY CCBENCH_LAYER_FOLDERS)
  foreach(folder IN LISTS registered)
    if(NOT folder IN_LIST _ccbench_table_folders)
      message(FATAL_ERROR "ccbench_layer(${folder}): no such folder in tests/lint/layers.py")
    endif()
  endforeach()
  foreach(folder IN LISTS _ccbench_table_folders)
    if(NOT folder IN_LIST registered)
      message(FATAL_ERROR "${folder}/ (tests/lint/layers.py) has no ccbench_layer() in CMakeLists.txt")
    endif()
    set(allowed "${_ccbench_allows_${folder}}")
    _ccbench_check_declared(${folder} "${allowed}")
    set(uses "")
    foreach(below IN LISTS allowed)
      get_property(below_libs GLOBAL PROPERTY CCBENCH_LAYER_LIBS_${below})
      list(APPEND uses ${below_libs})
    endforeach()
    get_property(libs GLOBAL PROPERTY CCBENCH_LAYER_LIBS_${folder})
    string(REPLACE "/" "." name "link_layer.${folder}")
    # The sanitizer build (CCBENCH_SANITIZE) compiles the same sources as the release build, whose
    # links already check them: there the checks are left out of the normal build (19 CPU seconds
    # of its links on 2 cores, cpu2core-20261203-ci-coverage) and can still be built by name.
    set(exclude "")
    if(CCBENCH_SANITIZE)
      set(exclude EXCLUDE_FROM_ALL)
    endif()
    ccbench_link_check(${name} ${exclude} LIBRARIES ${libs} USES ${uses})
  endforeach()
endfunction()
