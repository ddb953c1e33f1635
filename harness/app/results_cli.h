#pragma once
// The subcommands that read results: `compare`, `accept`, `export` and `history`, their options declared
// on the option layer (core/cli_options.h). No MPI: they run on a login node as under mpirun.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/cli_options.h"
#include "results/accept.h"
#include "results/compare.h"
#include "results/history.h"

namespace ccbench {

struct CompareRequest {
  std::vector<std::string> runs;  // BEFORE [AFTER]: results.csv files or folders; one run with --pair
  CompareOptions options;
  std::string fleet_db;  // --against-fleet: the one run against the median of its kind in this store
};

struct AcceptRequest {
  std::vector<std::string> runs;  // results.csv files or folders
  std::vector<Rule> rules;        // from --rules and --min-busbw
  std::string junit;              // --junit FILE, or empty
  std::string metrics;            // --metrics FILE.prom, or empty
};

struct ExportRequest {
  std::vector<std::string> runs;  // results.csv or links.csv files, or results folders
  std::string format = "openmetrics";
  std::string metrics;  // --metrics FILE.prom; empty: stdout
};

struct HistoryRequest {
  std::string db;                // --db FILE or CCBENCH_DB
  CaseFilter filter;             // any field given: the trend of that case, else the list of runs
  std::vector<std::string> add;  // --add RESULTS: results folders to store (past runs, other nodes)
};

// What acceptance rules' `select` may name: ccbench's collectives, implementations, transport
// labels (transports/labels.h), data types, operations and modes.
SelectVocabulary rule_vocabulary();

class CompareCommand {
 public:
  explicit CompareCommand(CLI::App& app);
  const cli::OptionSet& options() const { return set_; }
  bool given() const { return sub_->parsed(); }
  CompareRequest finish();  // Error(usage)

 private:
  CLI::App* sub_;
  cli::OptionSet set_;
  CompareRequest req_;
  std::vector<std::string> pairs_;
  bool against_fleet_ = false;
};

class AcceptCommand {
 public:
  explicit AcceptCommand(CLI::App& app);
  const cli::OptionSet& options() const { return set_; }
  bool given() const { return sub_->parsed(); }
  AcceptRequest finish();  // Error(usage)

 private:
  CLI::App* sub_;
  cli::OptionSet set_;
  AcceptRequest req_;
  std::string rules_file_;
  double min_busbw_ = 0;
};

class ExportCommand {
 public:
  explicit ExportCommand(CLI::App& app);
  const cli::OptionSet& options() const { return set_; }
  bool given() const { return sub_->parsed(); }
  ExportRequest finish() const { return req_; }

 private:
  CLI::App* sub_;
  cli::OptionSet set_;
  ExportRequest req_;
};

class HistoryCommand {
 public:
  explicit HistoryCommand(CLI::App& app);
  const cli::OptionSet& options() const { return set_; }
  bool given() const { return sub_->parsed(); }
  HistoryRequest finish();  // Error(usage)

 private:
  CLI::App* sub_;
  cli::OptionSet set_;
  HistoryRequest req_;
};

}  // namespace ccbench
