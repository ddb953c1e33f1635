#pragma once
// The subcommands behind main() that have no header of their own, one file each: run.cpp,
// compare.cpp, accept.cpp, export.cpp, history.cpp, list.cpp. Each returns the process exit code.
#include "harness/app/cli.h"

namespace ccbench {

// `ccbench --version` and `ccbench list` (list.cpp): rank 0 prints.
int print_version(int launcher_rank);
// `ccbench list`: a table, or with `json` every collective and every implementation with its device,
// whether it is built in (else why not), whether a run takes it without --impl and, where built
// in, the collectives it implements (tests/support_matrix.py holds this against the test oracle).
int print_implementations(int launcher_rank, bool json);
int run_compare(const CompareRequest& request);
int run_accept(const AcceptRequest& request);
int run_export(const ExportRequest& request);
int run_history(const HistoryRequest& request);
// `ccbench run` (harness/run.h): the exit code agreed by all ranks.
int run_benchmark(const RunOptions& opts, int* argc, char*** argv);

}  // namespace ccbench
