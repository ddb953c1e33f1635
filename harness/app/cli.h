#pragma once
// The command line. Parsing happens before MPI or GPU work: bad input ends the program with a
// message saying what is wrong and what is valid, and exit code 2, on every rank alike.
#include <string>
#include <variant>
#include <vector>

#include "harness/links/links.h"
#include "harness/app/model.h"
#include "harness/options.h"
#include "harness/app/topo.h"
#include "results/compare.h"
#include "results/history.h"

namespace ccbench {

struct VersionRequest {};
struct ListRequest {};
struct HelpRequest { std::string text; };
struct CompareRequest {
  std::vector<std::string> runs;  // BEFORE [AFTER]: results.csv files or folders; one run with --pair
  CompareOptions options;
  std::string fleet_db;  // --against-fleet: the one run against the median of its kind in this store
};

struct AcceptRequest {
  std::vector<std::string> runs;  // results.csv files or folders
  std::vector<Rule> rules;        // from --rules and --min-busbw
  std::string junit;              // --junit FILE, or empty
};

struct HistoryRequest {
  std::string db;          // --db FILE or CCBENCH_DB
  CaseFilter filter;       // any field given: the trend of that case, else the list of runs
  std::vector<std::string> add;  // --add RESULTS: results folders to store (past runs, other nodes)
};


using Command = std::variant<RunOptions, VersionRequest, ListRequest, HelpRequest, CompareRequest, TopoRequest,
                             AcceptRequest, HistoryRequest, LinksOptions, ModelRequest>;

// Parses argv. With no subcommand, `run` is implied. Throws Error(usage).
Command parse_command_line(int argc, const char* const* argv);

}  // namespace ccbench
