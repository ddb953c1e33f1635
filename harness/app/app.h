#pragma once
// The subcommands behind main(): each returns the process exit code.
#include "harness/app/cli.h"

namespace ccbench {

int print_version(int launcher_rank);
int print_implementations(int launcher_rank);
int run_compare(const CompareRequest& request);
int run_accept(const AcceptRequest& request);
int run_history(const HistoryRequest& request);
// `ccbench run`: MPI start-up, device choice, the sweep, reports; agreed exit code.
int run_benchmark(const RunOptions& opts, int* argc, char*** argv);

}  // namespace ccbench
