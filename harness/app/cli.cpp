#include "harness/app/cli.h"

#include <algorithm>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"
#include "harness/app/command_line.h"
#include "harness/app/shared_options.h"
#include "harness/model/acceptance_plan.h"
#include "harness/model/model.h"
#include "results/store.h"
#include "results/format.h"

namespace ccbench {

// ----------------------------------------------------------------------------------------------
// The small subcommands

ModelCommand::ModelCommand(CLI::App& app)
    : sub_(app.add_subcommand("model", "predict collective times on a described system (topology file)")), set_(*sub_) {
  set_.text({"--topology", "topology file (YAML) or preset name (topologies/presets)"}, req_.topology, "TOPOLOGY")
      ->required();
  set_.list({"--collective", "collectives, comma-separated"}, req_.collectives, collective_names());
  cli::Names<std::string> algorithms;
  for (const std::string& a : model_algorithms()) algorithms.canonical.emplace_back(a, a);
  set_.list({"--impl", "the model's algorithms, comma-separated", "all"}, req_.algorithms, algorithms);
  add_min_bytes(set_, req_.sweep.min_bytes);
  add_max_bytes(set_, req_.sweep.max_bytes, "");
  add_step_factor(set_, req_.sweep.factor);
  set_.integer({"--nodes", "replace the file's node count (scale the described cluster)", "the file's"}, req_.nodes, 1,
               1 << 20, "the number of nodes");
  set_.choice({"--format", "how the predictions are written"}, req_.format, {"table", "csv", "json"});
  set_.flag({"--acceptance",
             "estimate the wall time of accepting the fleet: the whole job, all pairs of nodes in "
             "rounds and one at a time, the culprit search (first collective and algorithm)"},
            req_.acceptance);
  add_iterations(set_, req_.iterations, req_.warmup);
  set_.number({"--step-setup", "with --acceptance: seconds each step adds (communicators, connections)",
               fmt::format("{:g}", kDefaultStepSetupSeconds)},
              req_.step_setup_s, {.lo = 0, .hi = 3600, .what = "seconds"}, "SECONDS");
}

ModelRequest ModelCommand::finish() {
  sweep_sizes(req_.sweep);
  if (!req_.acceptance && (sub_->count("--iters") || sub_->count("--warmup_iters") || sub_->count("--step-setup")))
    fail(ExitCode::usage,
         "model: -n, -w and --step-setup cost the measurements of --acceptance; without it the model "
         "predicts one collective call (add --acceptance, or leave them out)");
  return req_;
}

TopoCommand::TopoCommand(CLI::App& app)
    : sub_(app.add_subcommand("topo",
                              "describe every host of the job: CPUs, GPUs, PCIe and NVLink paths, NICs; "
                              "--expect checks it")),
      set_(*sub_) {
  set_.flag({"--json", "print JSON instead of text"}, req_.json);
  set_.text({"--dump", "write this node as a topology file (YAML) to FILE (- for stdout) instead"}, req_.dump, "FILE");
  add_out(set_, req_.out);
  add_overwrite(set_, req_.overwrite);
  set_.text({"--expect", "compare every host with an expected shape (YAML); exit 4 on a difference"}, req_.expect,
            "FILE");
}

TopoRequest TopoCommand::finish(const std::string& command_line) {
  req_.command_line = command_line;
  // --out was a file once: a name ending in .json would now become a folder of that name.
  const std::string& out = req_.out;
  if (out.size() > 5 && out.compare(out.size() - 5, 5, ".json") == 0)
    fail(ExitCode::usage,
         "topo --out {}: --out is a results folder (as in run and links), and topology.json is "
         "written into it; give a folder, or none",
         out);
  return req_;
}

ListCommand::ListCommand(CLI::App& app)
    : sub_(app.add_subcommand("list", "list the implementations this build knows")), set_(*sub_) {
  set_.flag({"--json",
             "print JSON, the support matrix: every collective, each device's transports, the model's "
             "schedules, and every implementation with its device, whether it is built in, whether a run takes "
             "it without --impl, what it is built on, the collectives it implements and the model's schedules "
             "that predict it"},
            json);
}

HelpCommand::HelpCommand(CLI::App& app)
    : sub_(app.add_subcommand("help", "help of ccbench or of one subcommand")), set_(*sub_) {
  set_.text({"subcommand", "the subcommand to describe"}, subcommand, "SUBCOMMAND");
  set_.flag({"--markdown", "print the reference of every subcommand's options (docs/reference.md)"}, markdown);
  set_.flag({"--flags", "print every flag of every subcommand as the parser holds them, one per line"}, flags);
  set_.flag({"--environment",
             "print every CCBENCH_* environment variable: what it takes, its default, whether every rank must have "
             "the same, and the value set here"},
            environment);
}

CommandLine::CommandLine()
    : app("ccbench: collective-communication benchmark (NCCL and MPI against our ring, tree and more)", "ccbench"),
      top(app), run(app), links(app), topo(app), compare(app), accept(app), export_(app), history(app), model(app),
      list_command(app), help(app) {
  app.set_help_all_flag("--help-all", "help for every subcommand");
  top.flag({"--version", "print the version and the parts built in"}, version);
  top.flag({"--list", "list the implementations this build knows (as ccbench list)"}, list);
  app.require_subcommand(0, 1);
  install_help(*this);
}

std::vector<std::pair<const CLI::App*, const cli::OptionSet*>> CommandLine::commands() const {
  return {{&run.app(), &run.options()},
          {subcommand("links"), &links.options()},
          {subcommand("topo"), &topo.options()},
          {subcommand("compare"), &compare.options()},
          {subcommand("accept"), &accept.options()},
          {subcommand("export"), &export_.options()},
          {subcommand("history"), &history.options()},
          {subcommand("model"), &model.options()},
          {subcommand("list"), &list_command.options()},
          {subcommand("help"), &help.options()}};
}

const CLI::App* CommandLine::subcommand(const std::string& name) const {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

// ----------------------------------------------------------------------------------------------
// Parsing

namespace {

const std::vector<std::string> kSubcommands = {"run",    "links",   "topo",  "compare", "accept",
                                               "export", "history", "model", "list",    "help"};

bool is_help(const std::string& a) { return a == "--help" || a == "-h"; }

// The command line as a shell would take it back: each argument quoted where it needs it, so that
// pasting run.json's command_line runs what ran and nothing more (a "$(...)" in a path stays text).
std::string full_command_line(int argc, const char* const* argv) {
  std::string s;
  for (int i = 0; i < argc; ++i)
    s += (i ? " " : "") + shell_quoted(without_store_secrets(argv[i]));  // --db URL: no password
  return s;
}

// The flags of `app` as typed: "-n", "--iters" ...
std::vector<std::string> flags_of(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& n : opt->get_snames()) out.push_back("-" + n);
    for (const std::string& n : opt->get_lnames()) out.push_back("--" + n);
  }
  return out;
}

// What to say about arguments no option took: the closest flags and subcommands, or the
// subcommand a flag belongs to.
std::string hint_for(const CommandLine& cl, const CLI::App& where, const std::vector<std::string>& extra) {
  for (const std::string& x : extra) {
    if (x.rfind('-', 0) != 0) {
      if (std::string s = did_you_mean(x, kSubcommands); !s.empty()) return s;
      continue;
    }
    const std::string flag = x.substr(0, x.find('='));
    if (std::string s = did_you_mean(flag, flags_of(where)); !s.empty()) return s;
    for (const auto& [sub, set] : cl.commands()) {
      const auto others = flags_of(*sub);
      if (sub != &where && std::find(others.begin(), others.end(), flag) != others.end())
        return fmt::format(" ({} is an option of `ccbench {}`)", flag, sub->get_name());
    }
  }
  return "";
}

[[noreturn]] void unknown_arguments(const CommandLine& cl, const std::vector<std::string>& extra) {
  // Sweeps and the tuner need a fresh launch per setting (NCCL reads most once per process).
  for (const std::string& x : extra) {
    if (x.rfind("--sweep-env", 0) == 0)
      fail(ExitCode::usage,
           "--sweep-env: every setting needs fresh processes; run scripts/sweep.py --sweep-env "
           "NAME=v1,v2,... -- <ccbench options> (see docs/guides/tuning.md)");
    if (x == "tune")
      fail(ExitCode::usage,
           "tune: run scripts/tune.py --space FILE.yaml --budget MINUTES -- <ccbench options> "
           "(see docs/guides/tuning.md)");
  }
  const CLI::App* where = &cl.run.app();
  for (const auto& [sub, set] : cl.commands())
    if (sub->parsed()) where = sub;
  const std::string see = where == &cl.run.app() ? "ccbench --help" : "ccbench " + where->get_name() + " --help";
  fail(ExitCode::usage, "unknown argument(s): {}{} (see {})", fmt::join(extra, " "), hint_for(cl, *where, extra), see);
}

// The request of the subcommand given.
Command finish(CommandLine& cl, int argc, const char* const* argv) {
  if (cl.version) return VersionRequest{};
  if (cl.list || cl.list_command.given()) return ListRequest{cl.list_command.json};
  if (cl.help.given()) {
    if (cl.help.markdown) return HelpRequest{reference_markdown(cl)};
    if (cl.help.flags) return HelpRequest{cli::option_names(cl.app)};
    if (cl.help.environment) return HelpRequest{environment_help()};
    if (cl.help.subcommand.empty()) return HelpRequest{overview_help(cl)};
    if (!cl.subcommand(cl.help.subcommand) || cl.help.subcommand == "help")
      cli::unknown_name("help", cl.help.subcommand, kSubcommands);
    return HelpRequest{subcommand_help(cl, cl.help.subcommand)};
  }
  if (cl.topo.given()) return cl.topo.finish(full_command_line(argc, argv));
  if (cl.model.given()) return cl.model.finish();
  if (cl.links.given()) return cl.links.finish(full_command_line(argc, argv));
  if (cl.history.given()) return cl.history.finish();
  if (cl.accept.given()) return cl.accept.finish();
  if (cl.export_.given()) return cl.export_.finish();
  if (cl.compare.given()) return cl.compare.finish();
  return cl.run.finish(full_command_line(argc, argv));
}

}  // namespace

Command parse_command_line(int argc, const char* const* argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // `-V` is nccl-tests' --device_cta_count (refused); said at once when given alone, as a version
  // request would be.
  if (args == std::vector<std::string>{"-V"})
    fail(ExitCode::usage,
         "-V is nccl-tests' -V/--device_cta_count N, which ccbench refuses (its kernels take "
         "CCBENCH_GPU_CHANNELS); the version is ccbench --version");
  // `run` is the default subcommand: insert it unless a subcommand or a top-level flag leads.
  const bool top_level_flag =
      !args.empty() && (args[0] == "--version" || is_help(args[0]) || args[0] == "--list" || args[0] == "--help-all");
  if (!top_level_flag &&
      (args.empty() || std::find(kSubcommands.begin(), kSubcommands.end(), args[0]) == kSubcommands.end()))
    args.insert(args.begin(), "run");

  CommandLine cl;
  // CLI11's parse(vector&) consumes its argument from the back: it takes the list in reverse.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    cl.app.parse(reversed);
  } catch (const CLI::Success& e) {  // --help, --help-all: CLI11 renders the right subcommand's help
    if (!args.empty() && is_help(args[0])) return HelpRequest{overview_help(cl)};
    std::ostringstream out, err;
    cl.app.exit(e, out, err);
    return HelpRequest{out.str() + err.str()};
  } catch (const CLI::ExtrasError&) {
    // CLI11 lists the leftovers in its reversed order; say them as typed.
    std::vector<std::string> extra = cl.app.remaining();
    for (CLI::App* sub : cl.app.get_subcommands()) {
      auto more = sub->remaining();
      extra.insert(extra.end(), more.begin(), more.end());
    }
    unknown_arguments(cl, extra);
  } catch (const CLI::ParseError& e) {
    fail(ExitCode::usage, "{} (see ccbench --help)", e.what());
  }
  return finish(cl, argc, argv);
}

}  // namespace ccbench
