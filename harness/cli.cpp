#include "harness/cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "results/error.h"
#include "topologies/model.h"

namespace ccbench {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    out.push_back(item);
  }
  return out;
}

// A comma-separated list of names (or "all") resolved by `parse`; unknown names are an error
// listing what is valid.
template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& text, const char* flag, Parse parse, const std::vector<T>& all,
                          const std::string& valid) {
  if (text == "all") return all;
  std::vector<T> out;
  for (const std::string& item : split_list(text)) {
    auto v = parse(item);
    if (!v) fail(ExitCode::usage, "{}: unknown value '{}' (valid: {}, or all)", flag, item, valid);
    if (std::find(out.begin(), out.end(), *v) == out.end()) out.push_back(*v);
  }
  if (out.empty()) fail(ExitCode::usage, "{}: empty list (valid: {}, or all)", flag, valid);
  return out;
}

template <typename Int>
Int parse_int(const std::string& text, const char* flag, Int lo, Int hi, const char* meaning) {
  Int v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    fail(ExitCode::usage, "{}: '{}' is not valid; expected {} (a whole number from {} to {})", flag, text,
         meaning, lo, hi);
  return v;
}

double parse_real(const std::string& text, const char* flag, const char* meaning) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    fail(ExitCode::usage, "{}: '{}' is not a number; expected {}", flag, text, meaning);
  return v;
}

const std::vector<std::string> kTransports = {"auto", "shm", "mpi", "tcp", "cuda_ipc", "nccl"};
const std::vector<std::string> kFormats = {"table", "csv", "json", "md"};
const std::set<std::string> kSubcommands = {"run", "compare", "list", "topo", "model"};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Raw strings from CLI11; validated by finish_run_options so every message is ours.
struct RawRun {
  std::string minbytes = "8", maxbytes, stepfactor, stepbytes, iters = "20", warmup = "5", check = "1";
  std::string datatype = "float", op = "sum", root = "0", graph = "0";
  std::string collective = "allreduce,allgather", impl = "default", device = "auto", transport = "auto";
  std::string in_place = "both", out, format = "table,csv,json,md", seed = "24301", timeout = "120";
  std::string cycles = "1", baseline;
  bool share_gpus = false;
  // Whether the options whose absence means "default" were given: given empty is an error.
  bool max_given = false, factor_given = false, inc_given = false, out_given = false, baseline_given = false;
};

void add_run_options(CLI::App& app, RawRun& r) {
  app.add_option("-b,--minbytes", r.minbytes, "smallest size (bytes; K/M/G/T = powers of 1024) [8]");
  app.add_option("-e,--maxbytes", r.maxbytes, "largest size [GPU: 1G, CPU: 64M, capped by free memory]");
  app.add_option("-f,--stepfactor", r.stepfactor, "multiply the size by this factor each step [2]");
  app.add_option("-i,--stepbytes", r.stepbytes, "add this many bytes each step (instead of -f)");
  app.add_option("-n,--iters", r.iters, "timed iterations per size [20]");
  app.add_option("-w,--warmup_iters", r.warmup, "warm-up iterations per size [5]");
  app.add_option("-c,--check", r.check, "check results: 1 = every size and iteration, 0 = off [1]");
  app.add_option("-d,--datatype", r.datatype, "data types, comma-separated, or all [float]");
  app.add_option("-o,--op", r.op, "reduction operations: sum, prod, min, max, avg, or all [sum]");
  app.add_option("-r,--root", r.root, "root rank of broadcast [0]");
  app.add_option("-G,--cudagraph", r.graph, "also time CUDA-graph replay: launches of a graph of -n iterations [0]");
  app.add_option("--collective", r.collective, "collectives, comma-separated, or all [allreduce,allgather]");
  app.add_option("--impl", r.impl,
                 "implementations, comma-separated, all, or default [default: nccl,ring,tree,best on GPUs; "
                 "mpi,ring,tree on CPUs]");
  app.add_option("--device", r.device, "auto, cpu or gpu [auto: GPUs when present]");
  app.add_option("--transport", r.transport,
                 "auto, shm, mpi, tcp (CPU ranks; CCBENCH_TCP_IF picks the interface), cuda_ipc [auto]");
  app.add_option("--in-place", r.in_place, "yes, no or both [both]");
  app.add_option("--out", r.out, "results folder, or none [./ccbench-results/<UTC time>-<host>]");
  app.add_option("--format", r.format, "outputs: table, csv, json, md [all]");
  app.add_option("--seed", r.seed, "seed of the input patterns [24301]");
  app.add_option("--timeout", r.timeout, "seconds any phase may take before the run ends with exit code 5 [120]");
  app.add_option("--cycles", r.cycles, "repeat the sweep N times, 0 = until stopped (burn-in) [1]");
  app.add_option("--baseline", r.baseline, "implementation the summary compares with [nccl on GPUs, mpi on CPUs]");
  app.add_flag("--share-gpus", r.share_gpus, "allow several ranks on one GPU");
}

RunOptions finish_run_options(const RawRun& r) {
  RunOptions o;
  o.sweep.min_bytes = parse_size(r.minbytes, "-b/--minbytes");
  if (r.max_given) {
    o.sweep.max_bytes = parse_size(r.maxbytes, "-e/--maxbytes");
    o.max_given = true;
  }
  if (r.factor_given && r.inc_given)
    fail(ExitCode::usage, "-f/--stepfactor and -i/--stepbytes exclude each other: give one");
  if (r.inc_given) {
    o.sweep.increment = parse_size(r.stepbytes, "-i/--stepbytes");
    if (o.sweep.increment == 0) fail(ExitCode::usage, "-i/--stepbytes 0 never advances the sweep: give a size > 0");
  }
  if (r.factor_given) o.sweep.factor = parse_real(r.stepfactor, "-f/--stepfactor", "a factor > 1");
  // Validate the sweep now, before MPI; without -e, against the largest default maximum (the
  // real default is chosen later from the device and its memory, never below -b).
  SweepSpec probe = o.sweep;
  if (!o.max_given) probe.max_bytes = std::max<std::uint64_t>(probe.min_bytes, std::uint64_t(1) << 30);
  sweep_sizes(probe);

  o.iterations = parse_int<int>(r.iters, "-n/--iters", 1, 1000000, "the number of timed iterations");
  o.warmup = parse_int<int>(r.warmup, "-w/--warmup_iters", 0, 1000000, "the number of warm-up iterations");
  o.check = parse_int<int>(r.check, "-c/--check", 0, 1, "0 (off) or 1 (on)") == 1;
  o.graph_launches = parse_int<int>(r.graph, "-G/--cudagraph", 0, 100000, "the number of graph launches");
  o.root = parse_int<int>(r.root, "-r/--root", 0, 1 << 30, "a rank number");
  o.seed = parse_int<std::uint64_t>(r.seed, "--seed", 0, UINT64_MAX, "a seed");
  double timeout = parse_real(r.timeout, "--timeout", "seconds > 0");
  if (!(timeout >= 0.001) || timeout > 7 * 24 * 3600.0)  // below 1 ms would become 0 ms
    fail(ExitCode::usage, "--timeout: {} is not valid; expected seconds from 0.001 to 604800 (a week)", r.timeout);
  o.timeout = std::chrono::milliseconds(static_cast<long long>(timeout * 1000));
  o.cycles = parse_int<int>(r.cycles, "--cycles", 0, 1 << 30, "the number of sweeps (0 = until stopped)");

  o.collectives = parse_list(r.collective, "--collective", parse_collective,
                             std::vector<Collective>(std::begin(kAllCollectives), std::end(kAllCollectives)),
                             valid_collectives());
  o.dtypes = parse_list(r.datatype, "-d/--datatype", parse_data_type,
                        std::vector<DataType>(std::begin(kAllDataTypes), std::end(kAllDataTypes)), valid_data_types());
  o.ops = parse_list(r.op, "-o/--op", parse_reduce_op,
                     std::vector<ReduceOp>(std::begin(kAllReduceOps), std::end(kAllReduceOps)), valid_reduce_ops());

  if (r.impl == "all" || r.impl == "default") {
    o.impls = {r.impl};
  } else {
    o.impls.clear();
    for (const std::string& name : split_list(r.impl)) {
      if (!is_known_implementation(name))
        fail(ExitCode::usage, "--impl: unknown implementation '{}' (valid: {}, or all)", name, valid_implementations());
      if (std::find(o.impls.begin(), o.impls.end(), name) == o.impls.end()) o.impls.push_back(name);
    }
    if (o.impls.empty()) fail(ExitCode::usage, "--impl: empty list (valid: {}, or all)", valid_implementations());
  }

  if (r.device == "auto") o.device = DeviceChoice::auto_detect;
  else if (r.device == "cpu") o.device = DeviceChoice::cpu;
  else if (r.device == "gpu") o.device = DeviceChoice::gpu;
  else fail(ExitCode::usage, "--device: unknown value '{}' (valid: auto, cpu, gpu)", r.device);

  if (std::find(kTransports.begin(), kTransports.end(), r.transport) == kTransports.end())
    fail(ExitCode::usage, "--transport: unknown value '{}' (valid: {})", r.transport, joined(kTransports));
  o.transport = r.transport;

  if (r.in_place == "yes") o.in_place = InPlaceChoice::yes;
  else if (r.in_place == "no") o.in_place = InPlaceChoice::no;
  else if (r.in_place == "both") o.in_place = InPlaceChoice::both;
  else fail(ExitCode::usage, "--in-place: unknown value '{}' (valid: yes, no, both)", r.in_place);

  o.formats.clear();
  for (const std::string& f : split_list(r.format)) {
    if (std::find(kFormats.begin(), kFormats.end(), f) == kFormats.end())
      fail(ExitCode::usage, "--format: unknown format '{}' (valid: {})", f, joined(kFormats));
    o.formats.push_back(f);
  }
  if (o.formats.empty()) fail(ExitCode::usage, "--format: empty list (valid: {})", joined(kFormats));

  if (r.out_given && r.out.empty()) fail(ExitCode::usage, "--out: empty path; give a results folder, or none");
  if (r.out == "none") o.no_files = true;
  else o.out_dir = r.out;
  if (r.baseline_given && !is_known_implementation(r.baseline))
    fail(ExitCode::usage, "--baseline: unknown implementation '{}' (valid: {})", r.baseline, valid_implementations());
  o.baseline = r.baseline;
  o.share_gpus = r.share_gpus;
  return o;
}

std::string full_command_line(int argc, const char* const* argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

}  // namespace

namespace {

// `ccbench model` options as typed.
struct RawModel {
  std::string topology, collective = "allreduce", impl, minbytes = "8", maxbytes = "1G", stepfactor = "2", format = "table";
  int nodes = 0;
};

void add_model_options(CLI::App& cmd, RawModel& r) {
  cmd.add_option("--topology", r.topology, "topology file (YAML) or preset name (topologies/presets)")->required();
  cmd.add_option("--collective", r.collective, "allreduce, allgather, reducescatter (comma list) [allreduce]");
  cmd.add_option("--impl", r.impl, "algorithms: ring,tree,hier,oneshot,twoshot,nccl-ring,nccl-tree [all]");
  cmd.add_option("-b,--minbytes", r.minbytes, "smallest size [8]");
  cmd.add_option("-e,--maxbytes", r.maxbytes, "largest size [1G]");
  cmd.add_option("-f,--stepfactor", r.stepfactor, "size factor per step [2]");
  cmd.add_option("--nodes", r.nodes, "replace the file's node count (scale the described cluster)")
      ->check(CLI::Range(1, 1 << 20));
  cmd.add_option("--format", r.format, "table, csv or json [table]")->check(CLI::IsMember({"table", "csv", "json"}));
}

ModelRequest finish_model_options(const RawModel& r, const CLI::App& cmd) {
  ModelRequest m;
  m.topology = r.topology;
  m.collectives = parse_list(r.collective, "--collective", parse_collective,
                             std::vector<Collective>(std::begin(kAllCollectives), std::end(kAllCollectives)),
                             valid_collectives());
  if (!r.impl.empty()) {
    const auto& known = model_algorithms();
    for (const std::string& a : split_list(r.impl)) {
      if (std::find(known.begin(), known.end(), a) == known.end())
        fail(ExitCode::usage, "--impl: the model has no algorithm '{}'; valid: {}", a, fmt::join(known, ", "));
      m.algorithms.push_back(a);
    }
  }
  m.sweep.min_bytes = parse_size(r.minbytes, "-b/--minbytes");
  m.sweep.max_bytes = parse_size(r.maxbytes, "-e/--maxbytes");
  if (cmd.count("--stepfactor")) m.sweep.factor = parse_real(r.stepfactor, "-f/--stepfactor", "a factor > 1");
  sweep_sizes(m.sweep);
  m.nodes = r.nodes;
  m.format = r.format;
  return m;
}

}  // namespace

Command parse_command_line(int argc, const char* const* argv) {
  // `run` is the default subcommand: insert it unless a subcommand or a top-level flag leads.
  std::vector<std::string> args(argv + 1, argv + argc);
  bool top_level_flag = !args.empty() && (args[0] == "--version" || args[0] == "-V" || args[0] == "--help" ||
                                          args[0] == "-h" || args[0] == "--list");
  if (!top_level_flag && (args.empty() || !kSubcommands.count(args[0]))) args.insert(args.begin(), "run");

  CLI::App app{"ccbench: collective-communication benchmark (NCCL and MPI against our ring and tree)", "ccbench"};
  app.set_help_all_flag("--help-all", "help for every subcommand");
  bool version = false, list = false;
  app.add_flag("-V,--version", version, "print the version and the parts built in");
  app.add_flag("--list", list, "list the implementations this build knows");
  app.require_subcommand(0, 1);

  RawRun raw;
  CLI::App* run = app.add_subcommand("run", "measure collectives (the default)");
  add_run_options(*run, raw);

  CompareRequest cmp;
  std::string tolerance = "0.05";
  CLI::App* compare = app.add_subcommand("compare", "compare two results.csv files (before, after)");
  compare->add_option("before", cmp.before, "results.csv of the earlier run")->required();
  compare->add_option("after", cmp.after, "results.csv of the later run")->required();
  compare->add_option("--tolerance", tolerance, "relative busbw drop reported as a regression [0.05]");

  CLI::App* listcmd = app.add_subcommand("list", "list the implementations this build knows");
  TopoRequest topo;
  CLI::App* topocmd = app.add_subcommand("topo", "describe this node: CPUs, NUMA, RDMA devices, GPUs and NVLinks");
  topocmd->add_flag("--json", topo.json, "print JSON instead of text");
  topocmd->add_option("--dump", topo.dump, "write this node as a topology file (YAML) to FILE, - for stdout");
  topocmd->add_option("--out", topo.out, "where to write the gathered topology (JSON), none for nowhere [topology.json]");
  topocmd->add_option("--expect", topo.expect, "compare every host with an expected shape (YAML); exit 4 on a difference");
  RawModel rawmodel;
  CLI::App* modelcmd = app.add_subcommand("model", "predict collective times on a described system (topology file)");
  add_model_options(*modelcmd, rawmodel);

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::Success& e) {  // --help, --help-all: CLI11 renders the right subcommand's help
    std::ostringstream out, err;
    app.exit(e, out, err);
    return HelpRequest{out.str() + err.str()};
  } catch (const CLI::ParseError& e) {
    fail(ExitCode::usage, "{} (see ccbench --help)", e.what());
  }
  if (version) return VersionRequest{};
  if (list || *listcmd) return ListRequest{};
  if (*topocmd) return topo;
  if (*modelcmd) return finish_model_options(rawmodel, *modelcmd);
  if (*compare) {
    cmp.tolerance = parse_real(tolerance, "--tolerance", "a fraction between 0 and 1");
    if (cmp.tolerance < 0 || cmp.tolerance >= 1)
      fail(ExitCode::usage, "--tolerance: {} is not valid; expected a fraction from 0 to below 1", tolerance);
    return cmp;
  }
  raw.max_given = run->count("--maxbytes") > 0;
  raw.factor_given = run->count("--stepfactor") > 0;
  raw.inc_given = run->count("--stepbytes") > 0;
  raw.out_given = run->count("--out") > 0;
  raw.baseline_given = run->count("--baseline") > 0;
  RunOptions o = finish_run_options(raw);
  o.command_line = full_command_line(argc, argv);
  return o;
}

}  // namespace ccbench
