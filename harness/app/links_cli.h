#pragma once
// The `ccbench links` subcommand's options (harness/links/links.h), registered on the command line's
// CLI11 app by harness/cli.cpp. Values are kept as strings and validated by finish(), so every
// message is ccbench's own (Error(usage) naming the flag and what is valid).
#include <string>

#include <CLI/CLI.hpp>

#include "harness/links/links.h"
#include "transports/ib/ib_logic.h"

namespace ccbench {

// The RDMA (ib) flags `run` and `links` share: --ib-dev, --gid-index, --ib-qps, --ib-chunk,
// --ib-mtu, --ib-tc, --ib-sl, and for `run` --gpudirect (GPU ranks' FIFOs in GPU memory).
class IbFlags {
 public:
  void add(CLI::App& app, bool with_gpudirect);
  // The validated options; throws Error(usage) naming the flag and what is valid.
  IbOptions finish(const CLI::App& app) const;

 private:
  std::string dev_, gid_index_, qps_ = "1", chunk_ = "1M", mtu_, tc_ = "0", sl_ = "0", gpudirect_ = "on";
};

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
  IbFlags ib_;
  bool all_at_once_ = false, overwrite_ = false;
};

}  // namespace ccbench
