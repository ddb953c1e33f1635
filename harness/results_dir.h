#pragma once
// The results folder of a run (`ccbench run`, `ccbench links`).
#include <string>

namespace ccbench {

// The results folder: `requested`, or a new ccbench-results/<UTC time>-<host>; created and proved
// writable. Throws Error(usage) naming the path. Before MPI, on the launcher's rank 0.
std::string prepare_output_dir(const std::string& requested);

}  // namespace ccbench
