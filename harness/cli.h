#pragma once
// The command line. Parsing happens before MPI or GPU work: bad input ends the program with a
// message saying what is wrong and what is valid, and exit code 2, on every rank alike.
#include <string>
#include <variant>
#include <vector>

#include "harness/model_command.h"
#include "harness/options.h"
#include "harness/topo_command.h"

namespace ccbench {

struct VersionRequest {};
struct ListRequest {};
struct HelpRequest { std::string text; };
struct CompareRequest {
  std::string before, after;
  double tolerance = 0.05;
};


using Command = std::variant<RunOptions, VersionRequest, ListRequest, HelpRequest, CompareRequest, TopoRequest, ModelRequest>;

// Parses argv. With no subcommand, `run` is implied. Throws Error(usage).
Command parse_command_line(int argc, const char* const* argv);

}  // namespace ccbench
