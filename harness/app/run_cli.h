#pragma once
// `ccbench run` (the default subcommand): its options, nccl-tests' flags among them, declared on
// the option layer (core/cli_options.h), and the checks that span several options. Parsing
// happens before MPI or GPU work: bad input is Error(usage) on every rank alike.
#include <string>

#include <CLI/CLI.hpp>

#include "core/cli_options.h"
#include "harness/engine/options.h"

namespace ccbench {

class RunCommand {
 public:
  // Adds the subcommand `run` and its options to `app`.
  explicit RunCommand(CLI::App& app);
  CLI::App& app() const { return *sub_; }
  const cli::OptionSet& options() const { return set_; }
  bool given() const { return sub_->parsed(); }
  // The validated options; throws Error(usage).
  RunOptions finish(const std::string& command_line);

 private:
  void add_sweep_options();
  void add_what_options();
  void add_control_options();
  void add_training_options();  // --overlap, --overlap-room, --nccl-config
  void add_nccl_tests_options();
  void add_nccl_tests_refusals();
  // An nccl-tests flag taking a whole number from lo to hi; `use` maps the value (returning a
  // note for the start-up block, or "") or refuses it with Error(usage) naming ccbench's way.
  void nccl_flag(const cli::Spec& spec, long long lo, long long hi, const std::string& shown_default,
                 std::function<std::string(const std::string& label, long long value)> use);
  void finish_sweep();
  void finish_outputs();
  // Options that would change nothing in this run: refused where the command line says so.
  void refuse_options_that_do_not_apply();
  std::vector<std::string> given_gpu_options() const;
  void refuse_unused_by_implementations() const;
  std::vector<std::string> implementation_list();

  CLI::App* sub_;
  cli::OptionSet set_;
  RunOptions o_;
  // As given, read by finish(): they depend on each other.
  std::string impl_ = "default", out_, ring_order_ = "rank", accept_, overlap_ = "none";
  std::vector<std::string> nccl_config_;  // --nccl-config, one KEY=V1,V2 each
  std::vector<std::string> formats_{"table", "csv", "json", "md"};
  double min_busbw_ = 0;
  int check_ = 1;                       // -c
  int per_iter_skip_ = 0;               // -K
  int local_register_ = 0;              // -R
  int overlap_room_ = kDefaultRoomSms;  // --overlap-room, applied to --overlap's spec by finish()
  CLI::Option* overlap_room_option_ = nullptr;
};

// --accept / --rules FILE and --min-busbw GBPS (0: none): the rules, read before any measurement,
// their `select` values checked against ccbench's vocabularies.
std::vector<Rule> acceptance_rules(const std::string& file, double min_busbw, const char* file_flag);

}  // namespace ccbench
