#pragma once
// The `ccbench links` subcommand's options (harness/links/links.h), declared on the option layer
// (core/cli_options.h); the flags it shares with `run` (-b -e -f -n -w, --device, -T/--timeout,
// --out, --transport, the RDMA and libfabric flags) come from harness/app/shared_options.h.
#include <string>

#include <CLI/CLI.hpp>

#include "core/cli_options.h"
#include "harness/links/links.h"

namespace ccbench {

class LinksCommand {
 public:
  // Adds the `links` subcommand and its options to `app`.
  explicit LinksCommand(CLI::App& app);
  const cli::OptionSet& options() const { return set_; }
  bool given() const { return sub_->parsed(); }
  // The validated options; throws Error(usage).
  LinksOptions finish(const std::string& command_line);

 private:
  CLI::App* sub_;
  cli::OptionSet set_;
  LinksOptions o_;
  std::string out_;
};

}  // namespace ccbench
