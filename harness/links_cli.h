#pragma once
// The `ccbench links` subcommand's options (harness/links.h), registered on the command line's
// CLI11 app by harness/cli.cpp. Values are kept as strings and validated by finish(), so every
// message is ccbench's own (Error(usage) naming the flag and what is valid).
#include <string>

#include <CLI/CLI.hpp>

#include "harness/links.h"

namespace ccbench {

class LinksCommand {
 public:
  // Adds the `links` subcommand and its options to `app`.
  explicit LinksCommand(CLI::App& app);
  bool given() const { return sub_->parsed(); }
  // The validated options; throws Error(usage).
  LinksOptions finish(const std::string& command_line) const;

 private:
  CLI::App* sub_;
  std::string transport_ = "auto", minbytes_ = "8", maxbytes_, factor_ = "8", iters_ = "20", warmup_ = "3";
  std::string threshold_ = "0.9", device_ = "auto", out_, timeout_ = "120";
  std::string ib_dev_, gid_index_, ib_qps_ = "1", ib_chunk_ = "1M", ib_mtu_, ib_tc_ = "0", ib_sl_ = "0";
  bool all_at_once_ = false;
};

}  // namespace ccbench
