#pragma once
// The command line. Parsing happens before MPI or GPU work: bad input ends the program with a
// message saying what is wrong, what is valid and, for a mistyped name, the closest ones, and
// exit code 2, on every rank alike. Every option is declared once on the option layer
// (core/cli_options.h); `ccbench help --markdown` prints the reference generated from those
// declarations (docs/reference.md).
#include <string>
#include <variant>
#include <vector>

#include "harness/app/model.h"
#include "harness/app/results_cli.h"
#include "harness/app/topo.h"
#include "harness/links/links.h"
#include "harness/engine/options.h"

namespace ccbench {

struct VersionRequest {};
struct ListRequest {
  bool json = false;  // list --json
};
struct HelpRequest {
  std::string text;
};

using Command = std::variant<RunOptions, VersionRequest, ListRequest, HelpRequest, CompareRequest, TopoRequest,
                             AcceptRequest, ExportRequest, HistoryRequest, LinksOptions, ModelRequest>;

// Parses argv. With no subcommand, `run` is implied. Throws Error(usage).
Command parse_command_line(int argc, const char* const* argv);

}  // namespace ccbench
