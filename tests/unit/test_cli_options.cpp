// The option layer (core/cli_options.h), "did you mean" (core/suggest.h), the transport table
// (core/transport_names.h) and what the command line built on them promises: types, ranges and
// defaults in every subcommand's --help, one meaning per flag and per letter, and the first-run
// defects each shown fixed (a test here fails on the command line before the option layer).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/cli_options.h"
#include "core/error.h"
#include "core/suggest.h"
#include "harness/app/cli.h"
#include "harness/app/command_line.h"
#include "harness/engine/sizes.h"
#include "tests/unit/cli_parse.h"
#include "tests/unit/usage_error.h"
#include "transports/labels.h"

namespace ccbench {
namespace {

std::string option_error(const std::vector<std::string>& args) {
  return ccbench::usage_error([&] { parse(args); });
}

// One option set on a scratch app, parsed from `args`.
struct Scratch {
  CLI::App app{"scratch", "scratch"};
  cli::OptionSet set{app};
  void parse(const std::vector<std::string>& args) { parse_app(app, args); }
  std::string error(const std::vector<std::string>& args) {
    return ccbench::usage_error([&] { parse(args); });
  }
};

// ---- the option layer ------------------------------------------------------------------------

TEST(OptionLayer, WholeNumbersAreDecimalAndWithinTheirRange) {
  Scratch s;
  int n = 20;
  s.set.integer({"-n,--iters", "timed iterations"}, n, 1, 100, "the number of timed iterations");
  s.parse({"-n", "010"});
  EXPECT_EQ(n, 10);  // never octal
  Scratch t;
  t.set.integer({"-n,--iters", "timed iterations"}, n, 1, 100, "the number of timed iterations");
  EXPECT_EQ(t.error({"-n", "0"}),
            "-n/--iters: '0' is not valid; expected a whole number from 1 to 100 (the number of timed iterations)");
  Scratch u;
  u.set.integer({"-n,--iters", "timed iterations"}, n, 1, 100, "iterations");
  for (const char* bad : {"1e3", "+5", " 5", "5x", "", "101"})
    EXPECT_NE(u.error({"-n", bad}).find("is not valid"), std::string::npos) << bad;
}

TEST(OptionLayer, NumbersSayTheirRangeInWords) {
  EXPECT_EQ((cli::Range{.lo = 0, .hi = 1, .what = "a fraction", .hi_open = true}.text()),
            "a fraction from 0 to below 1");
  EXPECT_EQ((cli::Range{.lo = 1, .what = "a factor", .lo_open = true}.text()), "a factor above 1");
  EXPECT_EQ((cli::Range{.lo = 0, .hi = 150, .what = "degrees", .lo_open = true}.text()),
            "degrees above 0 and at most 150");
  EXPECT_EQ((cli::Range{.lo = 0.01, .hi = 3600, .what = "seconds"}.text()), "seconds from 0.01 to 3600");
  Scratch s;
  double f = 0.5;
  s.set.number({"--tolerance", "slowdown"}, f, {.lo = 0, .hi = 1, .what = "a fraction", .hi_open = true});
  EXPECT_EQ(s.error({"--tolerance", "1"}), "--tolerance: '1' is not valid; expected a fraction from 0 to below 1");
  Scratch t;
  t.set.number({"--tolerance", "slowdown"}, f, {.lo = 0, .hi = 1, .what = "a fraction", .hi_open = true});
  EXPECT_EQ(t.error({"--tolerance", "nan"}),
            "--tolerance: 'nan' is not a number; expected a fraction from 0 to below 1");
}

TEST(OptionLayer, NamesAndListsSuggestTheClosest) {
  Scratch s;
  std::vector<DataType> d{DataType::float32};
  cli::Names<DataType> names;
  for (DataType t : kAllDataTypes) names.canonical.emplace_back(std::string(name(t)), t);
  names.parse = parse_data_type;
  s.set.list({"-d,--datatype", "data types"}, d, names);
  s.parse({"-d", "fp16,bf16,half"});  // aliases, and a repeat dropped
  EXPECT_EQ(d, (std::vector<DataType>{DataType::float16, DataType::bfloat16}));
  Scratch t;
  t.set.list({"-d,--datatype", "data types"}, d, names);
  const std::string e = t.error({"-d", "flaot"});
  EXPECT_EQ(e.rfind("-d/--datatype: unknown value 'flaot' (valid: int8, ", 0), 0u) << e;
  EXPECT_NE(e.find(", or all) (did you mean 'float'?)"), std::string::npos) << e;
  Scratch u;
  u.set.list({"-d,--datatype", "data types"}, d, names);
  EXPECT_EQ(u.error({"-d", ""}).rfind("-d/--datatype: empty list (valid: int8", 0), 0u);
  Scratch v;
  v.set.list({"-d,--datatype", "data types"}, d, names);
  v.parse({"-d", "all"});
  EXPECT_EQ(d.size(), std::size(kAllDataTypes));
}

TEST(OptionLayer, HelpShowsTypeValidValuesAndTheDefaultOfTheBoundVariable) {
  Scratch s;
  int n = 20;
  std::uint64_t b = 64 << 10;
  bool quiet = false;
  s.set.integer({"-n,--iters", "timed iterations"}, n, 1, 100, "iterations");
  s.set.size({"-b,--minbytes", "smallest size"}, b);
  s.set.flag({"--quiet", "no progress"}, quiet);
  const std::string help = s.app.help();
  EXPECT_NE(help.find("-n,--iters INT"), std::string::npos) << help;
  EXPECT_NE(help.find("timed iterations (1 to 100) [20]"), std::string::npos) << help;
  EXPECT_NE(help.find("-b,--minbytes SIZE"), std::string::npos) << help;
  EXPECT_NE(help.find("[64K]"), std::string::npos) << help;
  ASSERT_EQ(s.set.declared().size(), 3u);
  EXPECT_EQ(s.set.declared()[0].label, "-n/--iters");
  EXPECT_EQ(s.set.declared()[2].type, "");  // a switch
  EXPECT_EQ(cli::flag_label("-N,--cycles,--run_cycles"), "-N/--cycles");
  EXPECT_EQ(cli::flag_label("--out"), "--out");
}

TEST(DidYouMean, ClosestNamesOnly) {
  EXPECT_EQ(did_you_mean("allreduc", {"allreduce", "allgather", "reduce"}), " (did you mean 'allreduce'?)");
  EXPECT_EQ(did_you_mean("--iter", {"--iters", "--in-place", "-i"}), " (did you mean '--iters'?)");
  EXPECT_EQ(did_you_mean("flaot", {"float", "half", "double"}), " (did you mean 'float'?)");
  EXPECT_EQ(did_you_mean("pigeon", {"auto", "shm", "mpi", "tcp"}), "");
  EXPECT_EQ(closest_names("tcpp", {"tcp", "p2p", "shm"}), std::vector<std::string>{"tcp"});
  EXPECT_EQ(closest_names("", {"a"}), std::vector<std::string>{});
}

// ---- the transport table ---------------------------------------------------------------------

TEST(TransportNames, EveryNameRoundTripsAndAliasesPrintAsTheirName) {
  for (const TransportName& n : transport_table()) {
    EXPECT_EQ(parse_transport(n.name), n.id) << n.name;
    EXPECT_EQ(name(n.id), n.name);
    EXPECT_TRUE(n.scopes != 0) << n.name;
  }
  EXPECT_EQ(parse_transport("cuda_ipc"), Transport::p2p);
  EXPECT_EQ(parse_transport("nccl"), std::nullopt);
  EXPECT_EQ(valid_transports(kCpuRanks), "auto, shm, mpi, tcp, ib, ofi");
  EXPECT_EQ(valid_transports(kGpuRanks), "auto, p2p, host, net, tcp, ib, ofi");
  EXPECT_EQ(valid_transports(kCpuLinks), "auto, shm, mpi, tcp, ib, ofi");
  EXPECT_EQ(valid_transports(kGpuLinks), "auto, ce, sm, pcie");
}

TEST(TransportNames, RefusedWhereNotValidNamingWhereTheyAre) {
  auto error = [](std::string_view v, unsigned scopes) {
    return ccbench::usage_error([&] { parse_transport_for(v, scopes, "--transport"); });
  };
  EXPECT_EQ(parse_transport_for("cuda_ipc", kRunScopes, "--transport"), Transport::p2p);
  EXPECT_EQ(
      error("ce", kRunScopes),
      "--transport: 'ce' is valid for links on GPU ranks only (valid here: auto, shm, mpi, p2p, host, net, tcp, ib, "
      "ofi)");
  EXPECT_EQ(error("shmm", kCpuRanks),
            "--transport: unknown value 'shmm' (valid: auto, shm, mpi, tcp, ib, ofi) (did you mean 'shm'?)");
  EXPECT_NE(error("nccl", kRunScopes).find("'nccl' is an implementation, not a transport: give --impl nccl"),
            std::string::npos);
}

TEST(TransportNames, EveryLabelOfTheResultsParses) {
  for (const char* label : {"shm",
                            "mpi",
                            "shm+mpi",
                            "tcp",
                            "ib",
                            "p2p",
                            "host",
                            "net/tcp",
                            "net/ib",
                            "p2p+net/tcp",
                            "host+net/ib",
                            "nccl",
                            "nccl:SHM",
                            "nccl:NET/Socket+P2P",
                            "nccl:pinned net/socket+hostid",
                            "cuda_ipc",
                            "-",
                            "none",
                            "ce",
                            "sm",
                            "pcie",
                            "net/tcp:8",
                            "ofi:tcp;ofi_rxm:rma",
                            "ofi:shm:tagged",
                            "ofi:efa:rma",
                            "net/ofi:tcp;ofi_rxm:host",
                            "net/ofi:efa:hmem",
                            "p2p+net/ofi:cxi:hmem"})
    EXPECT_TRUE(is_transport_label(label)) << label;
  for (const char* label :
       {"", "auto", "shm++mpi", "+shm", "nccl:", "net/udp", "net", "net/tcp:", "net/tcp:x", "NCCL", "ofi:", "ofi:shm",
        "ofi::rma", "ofi:shm:hmem", "ofi:shm:auto", "net/ofi:shm:rma", "net/ofi:efa", "ofi:a b:rma"})
    EXPECT_FALSE(is_transport_label(label)) << label;
  // net alone is a --transport value, never a label: rows say which backend.
}

// ---- the command line ------------------------------------------------------------------------

TEST(CommandLine, EverySubcommandsHelpListsTheTypeOfEachOption) {
  CommandLine cl;
  for (const auto& [sub, set] : cl.commands()) {
    const std::string help = subcommand_help(cl, sub->get_name());
    for (const cli::Declared& d : set->declared()) {
      if (d.type.empty()) continue;
      const std::string shown = d.names + " " + d.type;
      EXPECT_NE(help.find(shown), std::string::npos) << sub->get_name() << ": '" << shown << "' not in\n" << help;
      if (!d.valid.empty()) {
        EXPECT_NE(help.find("(" + d.valid + ")"), std::string::npos) << sub->get_name() << " " << d.names;
      }
      if (!d.default_text.empty()) {
        EXPECT_NE(help.find("[" + d.default_text + "]"), std::string::npos) << sub->get_name() << " " << d.names;
      }
    }
  }
}

// A flag means the same wherever it appears: one letter, one long name; and the values shared
// by run and links parse alike.
TEST(CommandLine, OneMeaningPerFlagAndPerLetter) {
  CommandLine cl;
  std::map<std::string, std::set<std::string>> long_of_short;
  auto collect = [&](const CLI::App& app) {
    for (const CLI::Option* opt : app.get_options())
      for (const std::string& s : opt->get_snames())
        long_of_short[s].insert(opt->get_lnames().empty() ? "" : opt->get_lnames().front());
  };
  collect(cl.app);
  for (const auto& [sub, set] : cl.commands()) collect(*sub);
  for (const auto& [letter, longs] : long_of_short)
    EXPECT_EQ(longs.size(), 1u) << "-" << letter << " means " << testing::PrintToString(longs);
  // -T 0 is a week in run and links (links refused it before).
  const auto week = std::chrono::milliseconds(7LL * 24 * 3600 * 1000);
  EXPECT_EQ(std::get<RunOptions>(parse({"-T", "0"})).timeout, week);
  EXPECT_EQ(std::get<LinksOptions>(parse({"links", "--timeout", "0"})).timeout, week);
  EXPECT_EQ(std::get<LinksOptions>(parse({"links", "-b", "1K", "-e", "64K", "-n", "7", "-w", "2", "--device", "cpu"}))
                .max_bytes,
            64u << 10);
  EXPECT_EQ(std::get<ModelRequest>(parse({"model", "--topology", "cpu-node", "-b", "1K"})).sweep.min_bytes, 1024u);
  EXPECT_TRUE(std::get<LinksOptions>(parse({"links", "--out", "none"})).no_files);
  EXPECT_TRUE(std::get<RunOptions>(parse({"--out", "none"})).no_files);
  EXPECT_EQ(std::get<TopoRequest>(parse({"topo", "--out", "none"})).out, "none");
}

TEST(CommandLine, TransportsGoThroughTheTable) {
  EXPECT_EQ(std::get<RunOptions>(parse({"--transport", "cuda_ipc"})).transport, "p2p");
  EXPECT_EQ(std::get<LinksOptions>(parse({"links", "--transport", "tcp,mpi,tcp"})).transports,
            (std::vector<Transport>{Transport::tcp, Transport::mpi}));
  EXPECT_NE(option_error({"--transport", "ce"}).find("valid for links on GPU ranks only"), std::string::npos);
  EXPECT_NE(option_error({"links", "--transport", "p2p"}).find("valid for run on GPU ranks only"), std::string::npos);
  EXPECT_NE(option_error({"--transport", "nccl"}).find("give --impl nccl"), std::string::npos);
  EXPECT_NE(option_error({"history", "--db", "x.db", "--transport", "shmm"}).find("did you mean 'shm'"),
            std::string::npos);
  EXPECT_EQ(std::get<HistoryRequest>(parse({"history", "--db", "x.db", "--transport", "shm+mpi"})).filter.transport,
            "shm+mpi");
}

// ---- the first run (each of these failed on the command line before the option layer) ---------

TEST(FirstRun, HelpOpensWithCcbenchAndMpirunExamples) {
  const std::string help = std::get<HelpRequest>(parse({"--help"})).text;
  EXPECT_EQ(help.rfind("ccbench: ", 0), 0u) << help.substr(0, 200);
  EXPECT_NE(help.find("Usage: mpirun -np N ccbench [run] [OPTIONS]"), std::string::npos);
  EXPECT_LT(help.find("mpirun -np 8 ccbench "), help.find("Options:"));  // examples before the option lists
  EXPECT_EQ(help.find("Usage: run"), std::string::npos);
  EXPECT_NE(std::get<HelpRequest>(parse({"run", "--help"})).text.find("Usage: mpirun -np N ccbench [run] [OPTIONS]"),
            std::string::npos);
  EXPECT_NE(std::get<HelpRequest>(parse({"help", "links"})).text.find("Usage: mpirun -np N ccbench links"),
            std::string::npos);
}

TEST(FirstRun, DidYouMeanForFlagsValuesAndSubcommands) {
  EXPECT_NE(option_error({"--iter", "5"}).find("unknown argument(s): --iter 5 (did you mean '--iters'?)"),
            std::string::npos);
  EXPECT_NE(option_error({"--tolerance", "0.1"}).find("--tolerance is an option of `ccbench compare`"),
            std::string::npos);
  EXPECT_NE(option_error({"comapre", "a", "b"}).find("(did you mean 'compare'?)"), std::string::npos);
  EXPECT_NE(option_error({"--collective", "allreduc"}).find("(did you mean 'allreduce'?)"), std::string::npos);
  EXPECT_NE(option_error({"-d", "flaot"}).find("(did you mean 'float'?)"), std::string::npos);
  EXPECT_NE(option_error({"--impl", "rign"}).find("(did you mean 'ring'?)"), std::string::npos);
  EXPECT_NE(option_error({"--transport", "shmm"}).find("(did you mean 'shm'?)"), std::string::npos);
  EXPECT_NE(option_error({"links", "--ib-qsp", "2"}).find("did you mean '--ib-qps'"), std::string::npos);
  EXPECT_NE(option_error({"model", "--topology", "x", "--impl", "hierr"}).find("did you mean 'hier'"),
            std::string::npos);
}

TEST(FirstRun, BlockingModeIsAcceptedAndSaysWhereItsFiguresAre) {
  const RunOptions o = std::get<RunOptions>(parse({"-z", "1"}));
  std::string notes;
  for (const std::string& n : o.notes) notes += n + "\n";
  EXPECT_NE(notes.find("-z/--blocking 1: the time column is always the back-to-back batch"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("median, min, p95 and cv columns"), std::string::npos) << notes;
  EXPECT_TRUE(std::get<RunOptions>(parse({"-z", "0"})).notes.empty());
}

TEST(FirstRun, NoLetterWithTwoMeanings) {
  EXPECT_TRUE(std::holds_alternative<VersionRequest>(parse({"--version"})));
  EXPECT_NE(option_error({"-V"}).find("the version is ccbench --version"), std::string::npos);
  EXPECT_NE(option_error({"-V", "16"}).find("-V/--device_cta_count 16"), std::string::npos);
  EXPECT_NE(option_error({"run", "-V", "16"}).find("CCBENCH_GPU_CHANNELS"), std::string::npos);
}

TEST(FirstRun, LinksSweepEndsAtItsLargestSize) {
  const LinksOptions o = std::get<LinksOptions>(parse({"links", "-e", "4M"}));
  EXPECT_EQ(o.max_bytes, 4u << 20);
  const auto sizes = sweep_sizes({o.min_bytes, o.max_bytes, o.factor, 0, true});
  EXPECT_EQ(sizes.back(), 4u << 20);  // 8 B x 8^k stops at 2M: 4M is added
  EXPECT_EQ(sizes[sizes.size() - 2], 2u << 20);
  EXPECT_EQ(sweep_sizes({8, 4u << 20, 8, 0}).back(), 2u << 20);  // run's sweep stays nccl-tests'
  EXPECT_EQ(sweep_sizes({8, 512, 8, 0, true}).size(), 3u);       // 8, 64, 512: nothing added
}

TEST(FirstRun, TopoWritesIntoItsResultsFolder) {
  EXPECT_EQ(std::get<TopoRequest>(parse({"topo"})).out, "");  // a new ccbench-results/<time>-<host>/
  EXPECT_EQ(std::get<TopoRequest>(parse({"topo", "--out", "here"})).out, "here");
  EXPECT_NE(option_error({"topo", "--out", "topology.json"}).find("--out is a results folder"), std::string::npos);
}

// ---- the reference ---------------------------------------------------------------------------

TEST(Reference, DocumentsEveryDeclaredOptionAndTheNcclTestsFlags) {
  CommandLine cl;
  const std::string md = reference_markdown(cl);
  for (const auto& [sub, set] : cl.commands()) {
    EXPECT_NE(md.find("## `ccbench " + sub->get_name() + "`"), std::string::npos) << sub->get_name();
    for (const cli::Declared& d : set->declared()) {
      const std::string first = cli::split_list(d.names).front();
      EXPECT_NE(md.find("| `" + first + "`"), std::string::npos) << sub->get_name() << " " << d.names;
    }
  }
  for (const char* flag : {"`-b`, `--minbytes`", "`-z`, `--blocking`", "`-V`, `--device_cta_count`", "`-g`, `--ngpus`"})
    EXPECT_NE(md.find("| " + std::string(flag) + " |"), std::string::npos) << flag;
  for (const TransportName& n : transport_table())
    EXPECT_NE(md.find("| `" + std::string(n.name) + "` |"), std::string::npos) << n.name;
  EXPECT_NE(md.find("`cuda_ipc` is accepted as p2p's earlier name"), std::string::npos);
}

}  // namespace
}  // namespace ccbench
