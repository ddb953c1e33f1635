// --help and the reference (docs/reference.md), rendered from the declarations of the command
// line (harness/app/command_line.h).
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "core/knobs.h"
#include "harness/app/command_line.h"
#include "core/transport_names.h"

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
      {"help", {{"ccbench help [SUBCOMMAND] [--environment] [--markdown] [--flags]"}, "  ccbench help links"}},
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

// The knob table (core/knob_table.h), one row per variable; `|` never appears in its text.
std::string knob_table_markdown() {
  std::string s =
      "| Variable | Takes | Default | Every rank alike | What it sets | Chosen by |\n"
      "|---|---|---|---|---|---|\n";
  for (const KnobRow& row : kKnobTable)
    s += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", row.name, knob_valid_text(row), knob_default_text(row),
                     row.scope == KnobScope::run ? "yes" : "", row.what, row.chosen_by);
  return s;
}

constexpr const char* kKnobIntro =
    "\n## Environment variables\n\n"
    "ccbench reads these once at start (core/knob_table.h holds this table). Unset or empty means the default; "
    "an invalid value ends the run with exit code 2 and a message naming the variable, the value and what is "
    "valid. A set variable one or two letters from one of these names (a letter left out or two swapped, or "
    "a name in lower case) is refused the same way, naming the variable meant: as set it would be ignored. Sizes take "
    "the "
    "suffixes of `-b` (`256K`). Those marked *every rank alike* size what peers lay out "
    "alike: every rank must have the same values (`mpirun -x NAME`), and a run whose ranks differ stops with "
    "exit code 2 naming them; the others are each process's own. The measurements are evidence entries "
    "(docs/evidence/INDEX.md); the GPU ones are on 2 x H200, busbw of float sum out of place.\n\n";

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

// `label` then `text` broken at spaces into lines of at most 100 columns, later lines indented
// under the text's first.
std::string labelled_lines(std::string_view label, std::string_view text) {
  constexpr std::size_t kColumns = 100;
  const std::string indent(label.size(), ' ');
  std::string out(label), line;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(at, end - at);
    if (!line.empty() && label.size() + line.size() + 1 + word.size() > kColumns) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
    at = end + 1;
  }
  return out + line + "\n";
}

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

std::string environment_help() {
  std::string s =
      "Environment variables (docs/reference.md, Environment variables; core/knob_table.h). Unset or "
      "empty\nmeans the default; an invalid value is refused with exit code 2.\n";
  for (const KnobRow& row : kKnobTable) {
    s += fmt::format("\n{}{}\n", row.name, row.scope == KnobScope::run ? "  (every rank must have the same)" : "");
    if (const auto set = env_text(row.id)) s += fmt::format("  set here  {}\n", *set);
    s += labelled_lines("  takes     ", knob_valid_text(row)) + labelled_lines("  default   ", knob_default_text(row)) +
         labelled_lines("  sets      ", row.what) + labelled_lines("  chosen by ", row.chosen_by);
  }
  return s;
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
  s += kKnobIntro + knob_table_markdown();
  return s;
}

}  // namespace ccbench
