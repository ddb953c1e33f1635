# The GPU implementations of the support matrix (collectives/implementations.def, the one place
# their names are declared), for the GPU test lists: read line by line as tests/lib/implementations.py
# reads it for the oracle. Configure runs again when the file changes.
#   CCBENCH_GPU_KERNELS   our kernels (needs cuda), in the registry's order
#   CCBENCH_GPU_NCCL      NCCL's (needs nccl), in the registry's order
#   CCBENCH_GPU_COLLECTIVES_<name>  what that GPU implementation implements, comma-separated
set(_ccbench_def ${PROJECT_SOURCE_DIR}/collectives/implementations.def)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_ccbench_def})
file(STRINGS ${_ccbench_def} _ccbench_def_lines REGEX "^CCBENCH_(IMPLEMENTATION|SUPPORT)\\(")
set(CCBENCH_GPU_KERNELS)
set(CCBENCH_GPU_NCCL)
foreach(_line IN LISTS _ccbench_def_lines)  # a summary's ';' splits its line: the tail matches nothing
  if(_line MATCHES "^CCBENCH_IMPLEMENTATION\\(([a-z_]+), \"([a-z-]+)\"\\)$")
    set(_ccbench_name_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  elseif(_line MATCHES "^CCBENCH_SUPPORT\\(([a-z_]+), (cpu|gpu), ([a-z]+), [a-z]+, [a-z_]+, \"([a-z,]+)\", ")
    set(_name ${_ccbench_name_${CMAKE_MATCH_1}})
    if(NOT _name)
      message(FATAL_ERROR "${_ccbench_def}: ${CMAKE_MATCH_1} has no CCBENCH_IMPLEMENTATION line")
    endif()
    if(CMAKE_MATCH_2 STREQUAL "gpu")
      set(CCBENCH_GPU_COLLECTIVES_${_name} ${CMAKE_MATCH_4})
      if(CMAKE_MATCH_3 STREQUAL "cuda")
        list(APPEND CCBENCH_GPU_KERNELS ${_name})
      elseif(CMAKE_MATCH_3 STREQUAL "nccl")
        list(APPEND CCBENCH_GPU_NCCL ${_name})
      endif()
    endif()
  elseif(_line MATCHES "^CCBENCH_")
    message(FATAL_ERROR "${_ccbench_def}: a line that does not parse: ${_line}")
  endif()
endforeach()
if(NOT CCBENCH_GPU_KERNELS OR NOT CCBENCH_GPU_NCCL)
  message(FATAL_ERROR "${_ccbench_def}: no GPU kernels or no NCCL rows read")
endif()
