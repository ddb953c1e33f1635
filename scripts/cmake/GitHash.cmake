# Writes core/git_hash.h (CCBENCH_GIT_HASH) into OUTPUT_DIR; run at every build, so that a
# binary built after `git pull` or an edit names its commit. The file is rewritten only when the
# hash changes, so nothing recompiles otherwise.
#   cmake -DSOURCE_DIR=... -DOUTPUT_DIR=... -P GitHash.cmake
# CCBENCH_GIT_HASH in the environment wins (a copy of the tree whose .git is missing or stale).
if(DEFINED ENV{CCBENCH_GIT_HASH} AND NOT "$ENV{CCBENCH_GIT_HASH}" STREQUAL "")
  set(hash "$ENV{CCBENCH_GIT_HASH}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE hash OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT hash)
    set(hash "unknown")
  elseif(dirty)
    string(APPEND hash "-dirty")
  endif()
endif()
set(text "#pragma once\n// Generated at build time by scripts/cmake/GitHash.cmake.\n#define CCBENCH_GIT_HASH \"${hash}\"\n")
set(file "${OUTPUT_DIR}/core/git_hash.h")
if(EXISTS "${file}")
  file(READ "${file}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${file}" "${text}")
endif()
