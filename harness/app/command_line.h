#pragma once
// The whole command line as CLI11 apps: the top level and every subcommand with its options,
// declared on the option layer (core/cli_options.h), and the variables they fill. Built once per
// parse (harness/app/cli.cpp); --help and docs/reference.md are rendered from it
// (harness/app/help.cpp), so that neither can say what the parser does not do.
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/cli_options.h"
#include "harness/app/links_cli.h"
#include "harness/app/model.h"
#include "harness/app/results_cli.h"
#include "harness/app/run_cli.h"
#include "harness/app/topo.h"

namespace ccbench {

// `ccbench model`: predictions for a described system.
class ModelCommand {
 public:
  explicit ModelCommand(CLI::App& app);
  const cli::OptionSet& options() const { return set_; }
  bool given() const { return sub_->parsed(); }
  ModelRequest finish();

 private:
  CLI::App* sub_;
  cli::OptionSet set_;
  ModelRequest req_;
};

// `ccbench topo`: the hosts of the job.
class TopoCommand {
 public:
  explicit TopoCommand(CLI::App& app);
  const cli::OptionSet& options() const { return set_; }
  bool given() const { return sub_->parsed(); }
  TopoRequest finish(const std::string& command_line);

 private:
  CLI::App* sub_;
  cli::OptionSet set_;
  TopoRequest req_;
};

// `ccbench help [SUBCOMMAND]`, the environment variables (--environment), and the generated
// reference (--markdown) with what its check compares it with (--flags).
// `ccbench list`: the implementations this build knows; --json adds what each implements.
class ListCommand {
 public:
  explicit ListCommand(CLI::App& app);
  const cli::OptionSet& options() const { return set_; }
  bool given() const { return sub_->parsed(); }
  bool json = false;

 private:
  CLI::App* sub_;
  cli::OptionSet set_;
};

class HelpCommand {
 public:
  explicit HelpCommand(CLI::App& app);
  const cli::OptionSet& options() const { return set_; }
  bool given() const { return sub_->parsed(); }
  std::string subcommand;
  bool markdown = false, flags = false, environment = false;

 private:
  CLI::App* sub_;
  cli::OptionSet set_;
};

class CommandLine {
 public:
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  CLI::App app;
  cli::OptionSet top;
  bool version = false, list = false;
  RunCommand run;
  LinksCommand links;
  TopoCommand topo;
  CompareCommand compare;
  AcceptCommand accept;
  ExportCommand export_;
  HistoryCommand history;
  ModelCommand model;
  ListCommand list_command;
  HelpCommand help;

  // Every subcommand (CLI11's name) with its options, in the order help lists them.
  std::vector<std::pair<const CLI::App*, const cli::OptionSet*>> commands() const;
  // The subcommand named `name`, or nullptr.
  const CLI::App* subcommand(const std::string& name) const;
};

// `ccbench --help`: the overview (usage under mpirun, examples, subcommands) and run's options.
std::string overview_help(const CommandLine& cl);
// The help of one subcommand ("run", "links", ...).
std::string subcommand_help(const CommandLine& cl, const std::string& name);
// docs/reference.md: every subcommand's options, the transports, the nccl-tests table and the
// environment variables (core/knob_table.h).
std::string reference_markdown(const CommandLine& cl);
// `ccbench help --environment`: every CCBENCH_* variable as the reference gives it, and the value
// this process has where one is set.
std::string environment_help();
// Installs the usage lines and examples on the apps of `cl` (called by its constructor).
void install_help(CommandLine& cl);

}  // namespace ccbench
