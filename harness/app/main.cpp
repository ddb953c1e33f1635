// ccbench: the MPI-launched entry point. Parses the command line before any MPI or GPU work,
// then measures, reports and agrees on one exit code over all ranks (docs/design.md).
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "harness/app/app.h"
#include "harness/job/bootstrap.h"
#include "harness/app/cli.h"
#include "core/error.h"

int main(int argc, char** argv) {
  using namespace ccbench;
  const int lrank = launcher_rank();
  Command cmd;
  try {
    cmd = parse_command_line(argc, argv);
  } catch (const Error& e) {
    return report_error_before_mpi(e, lrank);
  }
  try {
    if (std::holds_alternative<HelpRequest>(cmd)) {
      if (lrank == 0) std::cout << std::get<HelpRequest>(cmd).text;
      return 0;
    }
    if (std::holds_alternative<VersionRequest>(cmd)) return print_version(lrank);
    if (std::holds_alternative<ListRequest>(cmd)) return print_implementations(lrank, std::get<ListRequest>(cmd).json);
    if (auto* c = std::get_if<CompareRequest>(&cmd)) return run_compare(*c);
    if (auto* a = std::get_if<AcceptRequest>(&cmd)) return run_accept(*a);
    if (auto* x = std::get_if<ExportRequest>(&cmd)) return run_export(*x);
    if (auto* h = std::get_if<HistoryRequest>(&cmd)) return run_history(*h);
    if (auto* t = std::get_if<TopoRequest>(&cmd))
      return t->dump.empty() ? run_topology(*t, &argc, &argv) : dump_local_topology(t->dump);
    if (auto* m = std::get_if<ModelRequest>(&cmd)) return run_model(*m);
    if (auto* l = std::get_if<LinksOptions>(&cmd)) return run_links(*l, &argc, &argv);
    return run_benchmark(std::get<RunOptions>(cmd), &argc, &argv);
  } catch (const Error& e) {
    // What reaches here was found before MPI started (the MPI stages end their errors themselves).
    return report_error_before_mpi(e, lrank);
  }
}
