#pragma once
// Where ccbench finds the data it ships (topology presets and expected topologies): relative to
// the running binary, never through the path it was built from, so an installed copy works with
// the source tree gone.
//   installed:   <prefix>/bin/ccbench  ->  <prefix>/share/ccbench/
//   build tree:  <build>/ccbench       ->  <build>/share/ccbench/ (links into the source tree that
//                                          CMake makes at configure time)
// CCBENCH_DATA_DIR, when set, replaces both.
#include <filesystem>
#include <string>
#include <vector>

namespace ccbench {

// The folders searched for `sub` (e.g. "presets"), most specific first; they need not exist.
std::vector<std::filesystem::path> data_dirs(const std::string& sub);

// The folder of the running executable (empty when /proc/self/exe cannot be read).
std::filesystem::path executable_dir();

}  // namespace ccbench
