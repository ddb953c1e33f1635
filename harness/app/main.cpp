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
    if (lrank == 0) fmt::print(stderr, "ccbench: error: {}\n", e.what());
    return static_cast<int>(e.code());
  }
  try {
    if (std::holds_alternative<HelpRequest>(cmd)) {
      if (lrank == 0) std::cout << std::get<HelpRequest>(cmd).text;
      return 0;
    }
    if (std::holds_alternative<VersionRequest>(cmd)) return print_version(lrank);
    if (std::holds_alternative<ListRequest>(cmd)) return print_implementations(lrank);
    if (auto* c = std::get_if<CompareRequest>(&cmd)) return run_compare(*c);
    if (auto* a = std::get_if<AcceptRequest>(&cmd)) return run_accept(*a);
    if (auto* h = std::get_if<HistoryRequest>(&cmd)) return run_history(*h);
    if (auto* t = std::get_if<TopoRequest>(&cmd)) return t->dump.empty() ? run_topology(*t, &argc, &argv) : dump_local_topology(t->dump);
    if (auto* m = std::get_if<ModelRequest>(&cmd)) return run_model(*m);
    if (auto* l = std::get_if<LinksOptions>(&cmd)) return run_links(*l, &argc, &argv);
    return run_benchmark(std::get<RunOptions>(cmd), &argc, &argv);
  } catch (const Error& e) {
    // Usage errors are the same on every rank: rank 0 says it once.
    if (lrank == 0 || e.code() != ExitCode::usage) fmt::print(stderr, "ccbench: error: {}\n", e.what());
    return static_cast<int>(e.code());
  }
}
