// --help and the reference (docs/reference.md), rendered from the declarations of the command
// line (harness/app/command_line.h).
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "harness/app/command_line.h"
#include "transports/names.h"

namespace ccbench {

namespace {

// How each subcommand is started, and a few examples; the top level's usage says all of them.
struct Usage {
  std::vector<std::string> lines;  // "mpirun -np N ccbench links [OPTIONS]"
  std::string examples;            // "  COMMAND   what it does\n" ...
};

const std::map<std::string, Usage>& usages() {
  static const std::map<std::string, Usage> u = {
      {"ccbench",
       {{"mpirun -np N ccbench [run] [OPTIONS]      measure (run is the default subcommand; one rank per GPU)",
         "mpirun -np N ccbench links|topo [OPTIONS]",
         "ccbench compare|accept|export|history|model|list|help ...   (no mpirun needed)"},
        "  mpirun -np 8 ccbench                             all-reduce and all-gather on 8 GPUs, every implementation\n"
        "                                                   built in, 8 B up to a memory-safe maximum, checked; "
        "results\n"
        "                                                   in ./ccbench-results/<UTC time>-<host>/\n"
        "  mpirun -np 4 ccbench --device cpu -e 64M         CPU ranks: MPI against our ring and tree\n"
        "  mpirun -np 8 ccbench -b 8 -e 8G -f 2 -g 1        an nccl-tests command line, as it is\n"
        "  mpirun -np 8 ccbench links                       bandwidth and latency of every pair of ranks\n"
        "  ccbench compare BEFORE/ AFTER/                   two runs, noise-aware\n"
        "  ccbench accept RESULTS/ --rules RULES.yaml       a verdict on acceptance rules (exit 4 on a miss)\n"
        "  ccbench model --topology h200-8gpu-nvswitch      predictions for a described system\n"
        "Without mpirun ccbench runs one rank, and a collective of one rank moves nothing between ranks."}},
      {"run",
       {{"mpirun -np N ccbench [run] [OPTIONS]"},
        "  mpirun -np 8 ccbench -b 8 -e 8G -f 2 -g 1\n"
        "  mpirun -np 8 ccbench --collective allreduce --impl nccl,ring --transport p2p\n"
        "  mpirun -np 4 ccbench --device cpu --impl mpi,ring,tree -e 64M --out none"}},
      {"links", {{"mpirun -np N ccbench links [OPTIONS]"}, "  mpirun -np 8 ccbench links -e 256M --out links-run"}},
      {"topo",
       {{"mpirun -np N ccbench topo [OPTIONS]"}, "  mpirun -np 2 --npernode 1 ccbench topo --expect expected.yaml"}},
      {"compare",
       {{"ccbench compare [OPTIONS] BEFORE [AFTER]"},
        "  ccbench compare before/ after/\n  ccbench compare run/ --pair impl=nccl:ring"}},
      {"accept",
       {{"ccbench accept [OPTIONS] RUNS..."},
        "  ccbench accept run/ --rules docs/examples/rules/nvswitch8.yaml --junit out.xml"}},
      {"export",
       {{"ccbench export [--format openmetrics] [--metrics FILE.prom] RUNS..."},
        "  ccbench export run/ --metrics /var/lib/prometheus/node-exporter/ccbench.prom"}},
      {"history",
       {{"ccbench history --db FILE/URL [OPTIONS]"},
        "  ccbench history --db runs.db --collective allreduce\n"
        "  ccbench history --db postgresql://ops@db1/fleet --host node017"}},
      {"model",
       {{"ccbench model --topology FILE|PRESET [OPTIONS]"},
        "  ccbench model --topology multinode-8gpu-8ndr --nodes 64"}},
      {"list", {{"ccbench list [--json]"}, "  ccbench list --json"}},
      {"help", {{"ccbench help [SUBCOMMAND] [--markdown] [--flags]"}, "  ccbench help links"}},
  };
  return u;
}

// The usage lines and examples in place of CLI11's "Usage: NAME [OPTIONS]".
class UsageFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string) const override {
    const auto it = usages().find(app->get_name());
    if (it == usages().end()) return "";
    std::string s;
    for (const std::string& line : it->second.lines) s += (s.empty() ? "Usage: " : "       ") + line + "\n";
    if (!it->second.examples.empty()) s += "\nExamples:\n" + it->second.examples + "\n";
    return s;
  }
};

std::string markdown_usage(const std::string& name) {
  const Usage& u = usages().at(name);
  std::string s = "```\n";
  for (const std::string& line : u.lines) s += line + "\n";
  s += "```\n";
  if (!u.examples.empty()) s += "\nExamples:\n\n```\n" + u.examples + "\n```\n";
  return s;
}

std::string transport_table_markdown() {
  std::string s =
      "| Name | run, CPU ranks | run, GPU ranks | links, CPU ranks | links, GPU ranks | Meaning |\n"
      "|---|---|---|---|---|---|\n";
  auto mark = [](const TransportName& n, unsigned scope) { return (n.scopes & scope) ? "yes" : ""; };
  for (const TransportName& n : transport_table())
    s += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", n.name, mark(n, kCpuRanks), mark(n, kGpuRanks),
                     mark(n, kCpuLinks), mark(n, kGpuLinks), n.meaning);
  return s;
}

constexpr const char* kReferenceIntro =
    "# ccbench command-line reference\n\n"
    "Generated by `ccbench help --markdown` from the option declarations; do not edit it by hand:\n"
    "`cmake --build build --target reference` rewrites it, and the test `lint.reference` fails when\n"
    "it differs from what the code declares.\n\n"
    "Conventions shared by every subcommand:\n\n"
    "- A flag means the same in every subcommand that has it (`-b -e -f -n -w`, `--device`,\n"
    "  `-T/--timeout`, `--out`, `--transport`, `--db`).\n"
    "- Sizes are bytes with an optional suffix K, M, G or T, powers of 1024 (as nccl-tests); GB/s\n"
    "  are 10^9 bytes per second.\n"
    "- `-T/--timeout 0` is a week (nccl-tests: no timeout).\n"
    "- `--out none` writes no files; without `--out` each run writes a new folder\n"
    "  `./ccbench-results/<UTC time>-<host>/`.\n"
    "- A value that is not valid ends the program before MPI or GPU work with exit code 2 and a\n"
    "  message naming the flag, what was given, what is valid and, for a mistyped name, the\n"
    "  closest ones. Every subcommand takes `-h, --help`.\n"
    "- An option given twice is refused the same way, both values named (the last does not\n"
    "  silently win); only `--nccl-config`, `compare --pair` and `history --add` take several.\n";

}  // namespace

void install_help(CommandLine& cl) {
  auto formatter = std::make_shared<UsageFormatter>();
  formatter->column_width(34);
  cl.app.formatter(formatter);
  for (CLI::App* sub : cl.app.get_subcommands([](CLI::App*) { return true; })) sub->formatter(formatter);
}

std::string overview_help(const CommandLine& cl) {
  return cl.app.help("ccbench") +
         "\nOptions of run, the default subcommand (ccbench run --help shows them alone):\n\n" +
         subcommand_help(cl, "run");
}

std::string subcommand_help(const CommandLine& cl, const std::string& name) {
  const CLI::App* sub = cl.subcommand(name);
  return sub ? sub->help("ccbench") : "";
}

std::string reference_markdown(const CommandLine& cl) {
  std::string s = kReferenceIntro;
  s += "\n## `ccbench`\n\n" + markdown_usage("ccbench");
  s += cli::reference_table(cl.top) +
       "| `-h`, `--help` | switch |  |  | this help; after a subcommand, that subcommand's |\n"
       "| `--help-all` | switch |  |  | the help of every subcommand |\n";
  for (const auto& [sub, set] : cl.commands()) {
    s += fmt::format("\n## `ccbench {}`\n\n{}.\n\n", sub->get_name(), sub->get_description());
    s += markdown_usage(sub->get_name());
    s += cli::reference_table(*set);
  }
  s += "\n## Transports\n\nOne table of names serves `--transport` of run and links and the transport column of "
       "the results; a name given where it is not valid is refused with what is valid there. `cuda_ipc` is "
       "accepted as p2p's earlier name.\n\n" +
       transport_table_markdown();
  s += "\n## nccl-tests flags\n\nnccl-tests' command lines run unchanged: each of its flags means what it means "
       "there, and a value ccbench cannot honour is refused with what to do instead.\n\n" +
       cli::nccl_tests_table({&cl.run.options()});
  return s;
}

}  // namespace ccbench
