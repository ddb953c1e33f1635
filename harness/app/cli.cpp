#include "harness/app/cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/app/links_cli.h"
#include "core/error.h"
#include "harness/model/model.h"

namespace ccbench {

namespace {

// Values are checked by CLI11 validators as they are parsed. Our validators throw Error(usage)
// themselves (CLI11 passes any other exception through), so that every message names the flag
// as users type it ("-n/--iters") and says what is valid.

constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600.0;  // a week: "no limit" for -T 0 / --timeout 0
constexpr double kMinTimeoutSeconds = 0.001;            // below 1 ms would become 0 ms
constexpr long long kMaxMisalignElements = 1 << 20;
constexpr const char* kTrainingGroup = "Training workloads";
constexpr const char* kNcclTestsGroup = "nccl-tests flags (same meaning; a value ccbench cannot honour is refused)";

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

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// "-n,--iters" -> "-n/--iters", as messages name a flag.
std::string flag_label(const std::string& names) {
  std::string s = names;
  std::replace(s.begin(), s.end(), ',', '/');
  return s;
}

// A comma-separated list of names (or "all") resolved by `parse`; unknown names are an error
// listing what is valid.
template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& text, const std::string& flag, Parse parse, const std::vector<T>& all,
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

// A plain decimal whole number from lo to hi, or nothing.
template <typename Int>
std::optional<Int> whole_in(const std::string& text, Int lo, Int hi) {
  Int v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

template <typename Int>
Int parse_int(const std::string& text, const std::string& flag, Int lo, Int hi, const std::string& meaning) {
  auto v = whole_in(text, lo, hi);
  if (!v)
    fail(ExitCode::usage, "{}: '{}' is not valid; expected {} (a whole number from {} to {})", flag, text,
         meaning, lo, hi);
  return *v;
}

double parse_real(const std::string& text, const std::string& flag, const std::string& meaning) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    fail(ExitCode::usage, "{}: '{}' is not a number; expected {}", flag, text, meaning);
  return v;
}

// A whole number from lo to hi, rewritten in plain decimal for CLI11's conversion (which would
// read "010" as octal). Added with transform(): check() would not let a validator rewrite.
template <typename Int>
CLI::Validator whole_number(const std::string& flag, Int lo, Int hi, const std::string& meaning) {
  return CLI::Validator(
      [=](std::string& v) {
        v = std::to_string(parse_int<Int>(v, flag, lo, hi, meaning));
        return std::string();
      },
      fmt::format("{}..{}", lo, hi));
}

// A size with K/M/G/T suffixes (powers of 1024), rewritten as bytes.
CLI::Validator size_value(const std::string& flag) {
  return CLI::Validator(
      [=](std::string& v) {
        v = std::to_string(parse_size(v, flag));
        return std::string();
      },
      "");
}

CLI::Validator real_number(const std::string& flag, const std::string& meaning) {
  return CLI::Validator(
      [=](std::string& v) {
        parse_real(v, flag, meaning);
        return std::string();
      },
      "");
}

// A number from lo to hi (to below hi where `below_hi`), `expected` saying so in words.
CLI::Validator real_range(const std::string& flag, double lo, double hi, bool below_hi, const std::string& expected) {
  return CLI::Validator(
      [=](std::string& v) {
        const double x = parse_real(v, flag, expected);
        if (x < lo || x > hi || (below_hi && x == hi))
          fail(ExitCode::usage, "{}: {} is not valid; expected {}", flag, v, expected);
        return std::string();
      },
      fmt::format("{}..{}{}", lo, below_hi ? "<" : "", hi));
}

// One of `choices`.
CLI::Validator one_of(const std::string& flag, const std::vector<std::string>& choices) {
  return CLI::Validator(
      [=](std::string& v) {
        if (std::find(choices.begin(), choices.end(), v) == choices.end())
          fail(ExitCode::usage, "{}: unknown value '{}' (valid: {})", flag, v, joined(choices));
        return std::string();
      },
      "{" + joined(choices) + "}");
}

// A comma-separated list of names, or all, stored in `out` as it is checked.
template <typename T, typename Parse>
CLI::Validator name_list(std::vector<T>& out, const std::string& flag, Parse parse, std::vector<T> all,
                         std::string valid) {
  return CLI::Validator(
      [&out, flag, parse, all, valid](std::string& v) {
        out = parse_list(v, flag, parse, all, valid);
        return std::string();
      },
      "");
}

// seconds of --timeout / -T: 0 means the longest, a week (nccl-tests' -T 0: no timeout).
std::chrono::milliseconds timeout_of(double seconds, const std::string& text) {
  if (seconds == 0) seconds = kMaxTimeoutSeconds;
  if (!(seconds >= kMinTimeoutSeconds) || seconds > kMaxTimeoutSeconds)
    fail(ExitCode::usage, "--timeout: {} is not valid; expected seconds from 0.001 to 604800 (a week), or 0 for a week",
         text);
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

const std::vector<std::string> kTransports = {"auto", "shm", "mpi", "tcp", "p2p", "host", "net", "ib", "cuda_ipc", "nccl"};
const std::vector<std::string> kFormats = {"table", "csv", "json", "md"};

// One --transport value: NCCL caches its path settings per process, so several side by side are
// several launches (scripts/paths.sh).
CLI::Validator transport_value() {
  return CLI::Validator(
      [](std::string& v) {
        if (v.find(',') != std::string::npos)
          fail(ExitCode::usage, "--transport {}: one transport per launch (NCCL caches its path settings per process); "
               "to measure several side by side run scripts/paths.sh --transport {} -- <ccbench options>", v, v);
        if (std::find(kTransports.begin(), kTransports.end(), v) == kTransports.end())
          fail(ExitCode::usage, "--transport: unknown value '{}' (valid: {})", v, joined(kTransports));
        return std::string();
      },
      "");
}
const std::set<std::string> kSubcommands = {"run", "compare", "list", "topo", "accept", "history", "links", "model"};

// What the command line gives before the checks that span several options (finish_run_options).
struct RawRun {
  std::string collective = "allreduce,allgather", datatype = "float", op = "sum", impl = "default";
  std::string device = "auto", in_place = "both", out, format = "table,csv,json,md", baseline;
  std::string timeout_text = "120";
  std::string accept, min_busbw, db;  // --accept, --min-busbw, --db
  std::string ring_order = "rank";    // --ring-order
  std::string tree = "double";        // --tree
  telemetry::RawOptions telemetry;    // registered and checked by telemetry/options.h
  std::string overlap;                 // --overlap
  std::vector<std::string> nccl_config;  // --nccl-config, repeatable
  int check = 1;          // -c
  int per_iter_skip = 0;  // -K
  int local_register = 0;  // -R
};

void add_sweep_options(CLI::App& app, RunOptions& o, RawRun& r) {
  app.add_option("-b,--minbytes", o.sweep.min_bytes, "smallest size (bytes; K/M/G/T = powers of 1024) [8]")
      ->transform(size_value("-b/--minbytes"))->type_name("SIZE");
  app.add_option("-e,--maxbytes", o.sweep.max_bytes, "largest size [GPU: 1G, CPU: 64M, capped by free memory]")
      ->transform(size_value("-e/--maxbytes"))->type_name("SIZE");
  app.add_option("-f,--stepfactor", o.sweep.factor, "multiply the size by this factor each step [2]")
      ->check(real_number("-f/--stepfactor", "a factor > 1"))->type_name("FLOAT");
  app.add_option("-i,--stepbytes", o.sweep.increment, "add this many bytes each step (instead of -f)")
      ->transform(size_value("-i/--stepbytes"))->type_name("SIZE");
  app.add_option("-n,--iters", o.iterations, "timed iterations per size [20]")
      ->transform(whole_number("-n/--iters", 1, 1000000, "the number of timed iterations"))->type_name("INT");
  app.add_option("-w,--warmup_iters", o.warmup, "warm-up iterations per size [5]")
      ->transform(whole_number("-w/--warmup_iters", 0, 1000000, "the number of warm-up iterations"))->type_name("INT");
  app.add_option("-d,--datatype", r.datatype, "data types, comma-separated, or all [float]")
      ->check(name_list(o.dtypes, "-d/--datatype", parse_data_type,
                        std::vector<DataType>(std::begin(kAllDataTypes), std::end(kAllDataTypes)), valid_data_types()))
      ->type_name("LIST");
  app.add_option("-o,--op", r.op, "reduction operations: sum, prod, min, max, avg, or all [sum]")
      ->check(name_list(o.ops, "-o/--op", parse_reduce_op,
                        std::vector<ReduceOp>(std::begin(kAllReduceOps), std::end(kAllReduceOps)), valid_reduce_ops()))
      ->type_name("LIST");
  app.add_option("-r,--root", o.root, "root rank of broadcast, reduce, gather, scatter [0]")
      ->transform(whole_number("-r/--root", 0, 1 << 30, "a rank number"))->type_name("INT");
  app.add_option("-G,--cudagraph", o.graph_launches, "also time CUDA-graph replay: launches of a graph of -n iterations [0]")
      ->transform(whole_number("-G/--cudagraph", 0, 100000, "the number of graph launches"))->type_name("INT");
  app.add_option("--collective", r.collective, "collectives, comma-separated, or all [allreduce,allgather]")
      ->check(name_list(o.collectives, "--collective", parse_collective,
                        std::vector<Collective>(std::begin(kAllCollectives), std::end(kAllCollectives)),
                        valid_collectives()))
      ->type_name("LIST");
  app.add_option("--impl", r.impl,
                 "implementations, comma-separated, all, or default [default: nccl,ring,tree,best on GPUs; "
                 "mpi,ring,tree on CPUs]")->type_name("LIST");
  app.add_option("--device", r.device, "auto, cpu or gpu [auto: GPUs when present]")
      ->check(one_of("--device", {"auto", "cpu", "gpu"}))->type_name("NAME");
  app.add_option("--transport", o.transport,
                 "CPU ranks: auto, shm, mpi, tcp (CCBENCH_TCP_IF picks the interface), ib; GPU ranks: auto, p2p, "
                 "host, net|tcp, ib (nccl pinned to the same path); one per launch (scripts/paths.sh runs several) "
                 "[auto]")
      ->check(transport_value())->type_name("NAME");
  app.add_option("--emulate-nodes", o.emulate_nodes,
                 "split each node's ranks into N emulated nodes in rank order (inter-node paths on one host) [1]")
      ->transform(whole_number("--emulate-nodes", 1, 1 << 20, "the number of emulated nodes per node"))
      ->type_name("INT");
  app.add_option("--ring-order", r.ring_order,
                 "ring of our ring implementations: rank, topo (nodes contiguous, NUMA neighbours), a list "
                 "such as 0,2,1,3, or a file holding one [rank]")
      ->type_name("rank|topo|LIST|FILE");
  app.add_option("--tree", r.tree, "all-reduce trees of `tree`: double (NCCL's double binary tree) or binary [double]")
      ->check(one_of("--tree", {"double", "binary"}));
  app.add_option("--in-place", r.in_place, "yes, no or both [both]")
      ->check(one_of("--in-place", {"yes", "no", "both"}))->type_name("NAME");
  app.add_option("--seed", o.seed, "seed of the input patterns [24301]")
      ->transform(whole_number<std::uint64_t>("--seed", 0, UINT64_MAX, "a seed"))->type_name("INT");
  app.add_option("-c,--check", r.check,
                 "check results: N >= 1 = every timed iteration of every size (nccl-tests: N checked "
                 "iterations), 0 = off [1]")
      ->transform(whole_number("-c/--check", 0, 1000000, "0 (off) or a count of checked iterations (on)"))
      ->type_name("INT");
}

void add_run_control_options(CLI::App& app, RunOptions& o, RawRun& r) {
  app.add_option("-T,--timeout", r.timeout_text,
                 "seconds any phase may take before the run ends with exit code 5; 0 = a week (nccl-tests: no "
                 "timeout) [120]")
      ->check(real_number("--timeout", "seconds > 0"))->type_name("SECONDS");
  app.add_option("-N,--cycles,--run_cycles", o.cycles, "repeat the sweep N times, 0 = until stopped (burn-in) [1]")
      ->transform(whole_number("--cycles", 0, 1 << 30, "the number of sweeps (0 = until stopped)"))->type_name("INT");
  app.add_option("--out", r.out, "results folder, or none [./ccbench-results/<UTC time>-<host>]")->type_name("PATH");
  app.add_option("--format", r.format, "outputs, comma-separated: table, csv, json, md [all]")->type_name("LIST");
  app.add_option("--baseline", r.baseline, "implementation the summary compares with [nccl on GPUs, mpi on CPUs]")
      ->type_name("NAME");
  app.add_flag("--share-gpus", o.share_gpus, "allow several ranks on one GPU");
  app.add_flag("--quiet", o.quiet, "no progress line on stderr");
  app.add_option("--progress-interval", o.progress_interval_s,
                 "seconds between progress lines when stderr is not a terminal [5]")
      ->check(real_range("--progress-interval", 0.01, 3600, false, "seconds from 0.01 to 3600"))
      ->type_name("SECONDS");
  app.add_option("--accept", r.accept, "acceptance rules (YAML) checked on the results; exit 4 when one fails")
      ->type_name("PATH");
  app.add_option("--min-busbw", r.min_busbw, "busbw every size from 1 MiB must reach, GB/s (as NCCL_TESTS_MIN_BW)")
      ->type_name("GBPS");
  app.add_option("--db", r.db, "append the run to this SQLite history [CCBENCH_DB]")->type_name("PATH");
  app.add_option("--ceilings", o.ceilings_file, "links.json of `ccbench links`: run.json rows get busbw / link ceiling")
      ->type_name("PATH");
  app.add_option("--model", o.model_topology,
                 "topology file or preset: run.json rows get the model's predicted time and busbw and "
                 "measured / predicted")
      ->type_name("TOPOLOGY");
  app.add_flag("--measure-ceilings", o.measure_ceilings, "measure the link ceilings first (links.json, efficiency)");
  app.add_option("--straggler-threshold", o.straggler_threshold,
                 "name a rank whose median time is this fraction behind the median rank's (0.2 = 20 %) [0.2]")
      ->check(real_range("--straggler-threshold", 0.001, 100, false, "a fraction from 0.001 to 100"))
      ->type_name("FRACTION");
  app.add_option("--groups", o.groups,
                 "run in sub-groups: world, node, pairs, rails, or a file with one group per line [world]")
      ->type_name("KIND|FILE");
  app.add_flag("--serial", o.serial, "with --groups: one group at a time (pairs always are)");
  app.add_option("--group-outlier-threshold", o.group_outlier_threshold,
                 "with --groups: flag a group below this fraction of the median busbw of like groups [0.9]")
      ->check(real_range("--group-outlier-threshold", 0.01, 1, false, "a fraction from 0.01 to 1"))
      ->type_name("FRACTION");
  telemetry::add_options(app, r.telemetry);
  app.add_option("--overlap", r.overlap, "a compute load on every GPU beside the collectives: gemm[:N] (cuBLAS bf16, "
                 "N^3) or membw[:SIZE] [none]")->group(kTrainingGroup)->type_name("KIND");
  app.add_option("--nccl-config", r.nccl_config, "one NCCL communicator per value, rows labelled (repeatable: every "
                 "combination): KEY=V1,V2 with KEY minCTAs, maxCTAs, cgaClusterSize, CTAPolicy, netName, trafficClass, "
                 "NCCL_ALGO or NCCL_PROTO")->group(kTrainingGroup)->type_name("KEY=VALUES");
}

// --db FILE, else CCBENCH_DB, else "" (no history).
std::string history_path(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("CCBENCH_DB");
  return env ? env : "";
}

// --accept FILE and --min-busbw GBPS, read before any measurement.
std::vector<Rule> acceptance_rules(const std::string& file, const std::string& min_busbw, const char* file_flag) {
  std::vector<Rule> rules = file.empty() ? std::vector<Rule>{} : load_rules(file, file_flag);
  if (!min_busbw.empty()) {
    const double gbps = parse_real(min_busbw, "--min-busbw", "GB/s > 0");
    if (!(gbps > 0)) fail(ExitCode::usage, "--min-busbw: {} is not valid; expected GB/s > 0", min_busbw);
    rules.push_back(min_busbw_rule(gbps));
  }
  return rules;
}

// An nccl-tests flag taking a whole number from lo to hi: `use` maps the value (returning a
// note for the start-up block, or "") or refuses it with Error(usage) naming ccbench's way.
using UseValue = std::function<std::string(const std::string& flag, long long value)>;
void add_nccl_tests_flag(CLI::App& app, std::vector<std::string>& notes, const std::string& names, long long lo,
                         long long hi, const std::string& help, UseValue use) {
  const std::string flag = flag_label(names);
  const std::string meaning = help.substr(0, help.find(" ["));  // without the default
  app.add_option(names)
      ->description(help)
      ->check(CLI::Validator(
                 [&notes, flag, meaning, lo, hi, use](std::string& v) {
                   const auto n = whole_in(v, lo, hi);
                   if (!n)
                     fail(ExitCode::usage, "{}: '{}' is not valid; expected a whole number from {} to {} ({})", flag,
                          v, lo, hi, meaning);
                   if (std::string note = use(flag, *n); !note.empty()) notes.push_back(note);
                   return std::string();
                 },
                 fmt::format("{}..{}", lo, hi)))
      ->type_name("INT")
      ->group(kNcclTestsGroup);
}

[[noreturn]] void refuse(const std::string& flag, long long value, const std::string& instead) {
  fail(ExitCode::usage, "{} {}: {}", flag, value, instead);
}

// An nccl-tests flag of which ccbench honours one value, `accepted` (what it does anyway); any
// other is refused with `instead`.
UseValue only(long long accepted, std::string instead) {
  return [accepted, instead](const std::string& flag, long long v) -> std::string {
    if (v != accepted) refuse(flag, v, instead);
    return "";
  };
}

// The nccl-tests flags with a meaning here.
void add_nccl_tests_options(CLI::App& app, RunOptions& o, RawRun& r) {
  auto& notes = o.notes;
  const std::string one_gpu =
      "ccbench runs one thread and one GPU per process; for more GPUs start more MPI ranks (mpirun -np N, one per "
      "GPU)";
  add_nccl_tests_flag(app, notes, "-t,--nthreads", 0, 1 << 20, "threads per process: 1 (one rank per GPU)",
                      only(1, one_gpu));
  add_nccl_tests_flag(app, notes, "-g,--ngpus", 0, 1 << 20, "GPUs per thread: 1 (one rank per GPU)",
                      only(1, one_gpu));
  add_nccl_tests_flag(app, notes, "-a,--average", 0, 3,
                      "time reported over ranks: 0 = rank 0, 1 = mean, 2 = fastest, 3 = slowest [3]",
                      [&o](const std::string&, long long v) -> std::string {
                        o.rank_time = static_cast<RankTime>(v);
                        return "";
                      });
  add_nccl_tests_flag(app, notes, "-m,--agg_iters", 1, kMaxAggIters,
                      "collectives issued back to back per timed iteration (NCCL: in one group); times are per "
                      "collective [1]",
                      [&o](const std::string&, long long v) -> std::string {
                        o.agg_iters = static_cast<int>(v);
                        return "";
                      });
  add_nccl_tests_flag(app, notes, "-z,--blocking", 0, 3, "blocking mode: 0 (the batch never waits between collectives)",
                      only(0, "the time column is the non-blocking batch (-z 0); the blocking figures are "
                              "always measured too: every single iteration is waited for and started after a "
                              "barrier (as -z 3), reported as the median, min, p95 and cv columns"));
  add_nccl_tests_flag(app, notes, "-R,--local_register", 0, 2,
                      "buffer registration: 0 = none, 2 = symmetric windows (--impl nccl-symm instead of nccl)",
                      [&r](const std::string& f, long long v) -> std::string {
                        if (v == 1)
                          refuse(f, v,
                                 "buffers registered with ncclCommRegister are not offered; -R 2 measures NCCL "
                                 "with symmetric registered windows (--impl nccl-symm), -R 0 plain buffers");
                        r.local_register = static_cast<int>(v);
                        return v == 2 ? "-R 2: nccl-symm (NCCL on symmetric registered windows) stands in for nccl"
                                      : "";
                      });
  add_nccl_tests_flag(app, notes, "-u,--unalign", 0, kMaxMisalignElements,
                      "start the send and receive buffers this many elements late [0]",
                      [&o](const std::string&, long long v) -> std::string {
                        o.misalign = static_cast<int>(v);
                        return "";
                      });
  add_nccl_tests_flag(app, notes, "-I,--per_iter_timing", 0, 1,
                      "per-iteration timing: always on (median, min, p95, cv columns)",
                      [](const std::string& f, long long v) -> std::string {
                        return v ? f + " 1: ccbench always times single iterations too: the median, min, p95 "
                                       "and cv columns"
                                 : "";
                      });
  add_nccl_tests_flag(app, notes, "-K,--per_iter_skip", 0, 1000000,
                      "leave the first N single iterations out of the statistics (run as N more warm-up iterations)",
                      [&r](const std::string& f, long long v) -> std::string {
                        r.per_iter_skip = static_cast<int>(v);
                        return v ? fmt::format("{} {}: {} more warm-up iterations, so that no statistic includes "
                                               "them", f, v, v)
                                 : "";
                      });
  add_nccl_tests_flag(app, notes, "-p,--parallel_init", 0, 1, "parallel NCCL set-up by threads: one thread, nothing to do",
                      [](const std::string& f, long long v) -> std::string {
                        return v ? f + " 1: one thread per process: there is nothing to initialise in parallel" : "";
                      });
}

// The nccl-tests switches for things ccbench does not offer: their "off" value is accepted.
void add_nccl_tests_refusals(CLI::App& app, RunOptions& o) {
  auto& notes = o.notes;
  add_nccl_tests_flag(app, notes, "-C,--report_cputime", 0, 1, "report CPU time: 0",
                      only(0, "CPU launch time is not reported; the time columns are device time (CUDA events) "
                               "on GPU ranks and wall-clock time on CPU ranks (--device cpu)"));
  add_nccl_tests_flag(app, notes, "-S,--report_timestamps", 0, 1, "timestamp per line: 0",
                      only(0, "rows carry no timestamp; run.json holds the start time (context.started_utc) and "
                               "the results folder is named after it"));
  add_nccl_tests_flag(app, notes, "-M,--memory", 0, 1, "memory usage report: 0",
                      only(0, "no memory report is printed; 'ccbench topo' shows each GPU's memory, and a note "
                               "says when free memory caps -e"));
  add_nccl_tests_flag(app, notes, "-y,--stream_null", 0, 1, "use the default CUDA stream: 0",
                      only(0, "collectives run on each rank's own stream; the default stream is not offered"));
  add_nccl_tests_flag(app, notes, "-x,--cta_policy", 0, 2, "NCCL CTA policy: set NCCL_CTA_POLICY instead",
                      [](const std::string& f, long long v) -> std::string {
                        refuse(f, v,
                               fmt::format("set it for NCCL through the environment instead: NCCL_CTA_POLICY={} "
                                           "(add -x NCCL_CTA_POLICY to mpirun)", v));
                      });
  add_nccl_tests_flag(app, notes, "-D,--device_implementation", 0, 1000, "NCCL device-API implementation: 0",
                      only(0, "NCCL's device-API kernels are not offered; ccbench's own device kernels are "
                               "--impl ring,tree,oneshot,twoshot,ce ('ccbench list')"));
  add_nccl_tests_flag(app, notes, "-V,--device_cta_count", 1, 128, "CTAs of -D kernels: see CCBENCH_GPU_CHANNELS",
                      [](const std::string& f, long long v) -> std::string {
                        refuse(f, v,
                               "there are no -D kernels here; the blocks of ccbench's own kernels are set with "
                               "CCBENCH_GPU_CHANNELS");
                      });
  app.add_option("-J,--output_file", o.json_file, "also write run.json to this file (a name ending in .json)")
      ->check(CLI::Validator(
          [](std::string& v) {
            auto dot = v.rfind('.');
            std::string ext = dot == std::string::npos ? "" : v.substr(dot + 1);
            std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
            if (ext != "json")
              fail(ExitCode::usage, "-J/--output_file: '{}' does not end in .json; only JSON is written (as "
                                    "nccl-tests, the type comes from the suffix)", v);
            return std::string();
          },
          ""))
      ->type_name("PATH")
      ->group(kNcclTestsGroup);
}

// nccl-tests' environment: NCCL_TESTS_MIN_BW is the threshold of the average bus bandwidth;
// NCCL_TESTS_SPLIT(_MASK) split the ranks into groups by a bit mask: refused (sub-groups run with
// --groups instead).
void read_nccl_tests_environment(RunOptions& o) {
  for (const char* var : {"NCCL_TESTS_SPLIT_MASK", "NCCL_TESTS_SPLIT"})
    if (const char* v = std::getenv(var))
      fail(ExitCode::usage, "{}='{}': running the collective in sub-groups of ranks is not available yet; unset {} "
                            "(or start mpirun with only the ranks of one group)", var, v, var);
  if (const char* v = std::getenv("NCCL_TESTS_MIN_BW")) {
    double bw = 0;
    auto [end, ec] = std::from_chars(v, v + std::char_traits<char>::length(v), bw);
    if (ec != std::errc() || *end != '\0' || !std::isfinite(bw) || bw <= 0)
      fail(ExitCode::usage, "NCCL_TESTS_MIN_BW='{}' is not valid; expected a bus bandwidth in GB/s > 0", v);
    o.min_busbw_gbps = bw;
  }
}

// The implementation list: names, all or default; -R 2 puts nccl-symm in place of nccl.
std::vector<std::string> implementation_list(const RawRun& r, RunOptions& o) {
  if (r.impl == "all" || r.impl == "default") return {r.impl};
  std::vector<std::string> impls;
  for (std::string name : split_list(r.impl)) {
    if (!is_known_implementation(name))
      fail(ExitCode::usage, "--impl: unknown implementation '{}' (valid: {}, or all)", name, valid_implementations());
    if (o.nccl_symmetric && name == "nccl") name = "nccl-symm";
    if (std::find(impls.begin(), impls.end(), name) == impls.end()) impls.push_back(name);
  }
  if (impls.empty()) fail(ExitCode::usage, "--impl: empty list (valid: {}, or all)", valid_implementations());
  if (o.nccl_symmetric && std::find(impls.begin(), impls.end(), "nccl-symm") == impls.end())
    fail(ExitCode::usage, "-R 2 puts nccl-symm in place of nccl, but --impl {} names no nccl (add nccl, or leave -R out)",
         r.impl);
  return impls;
}

// The checks that span several options, after CLI11 has checked each value.
void finish_run_options(const CLI::App& run, const RawRun& r, RunOptions& o) {
  o.max_given = run.count("--maxbytes") > 0;
  const bool factor_given = run.count("--stepfactor") > 0, inc_given = run.count("--stepbytes") > 0;
  if (factor_given && inc_given) fail(ExitCode::usage, "-f/--stepfactor and -i/--stepbytes exclude each other: give one");
  if (inc_given && o.sweep.increment == 0)
    fail(ExitCode::usage, "-i/--stepbytes 0 never advances the sweep: give a size > 0");
  // Validate the sweep now, before MPI; without -e, against the largest default maximum (the
  // real default is chosen later from the device and its memory, never below -b).
  SweepSpec probe = o.sweep;
  if (!o.max_given) probe.max_bytes = std::max<std::uint64_t>(probe.min_bytes, std::uint64_t(1) << 30);
  sweep_sizes(probe);

  o.timeout = timeout_of(std::stod(r.timeout_text), r.timeout_text);
  o.warmup += r.per_iter_skip;
  o.nccl_symmetric = r.local_register == 2;
  o.impls = implementation_list(r, o);
  o.device = r.device == "cpu" ? DeviceChoice::cpu : r.device == "gpu" ? DeviceChoice::gpu : DeviceChoice::auto_detect;
  o.in_place = r.in_place == "yes" ? InPlaceChoice::yes : r.in_place == "no" ? InPlaceChoice::no : InPlaceChoice::both;

  o.formats.clear();
  for (const std::string& f : split_list(r.format)) {
    if (std::find(kFormats.begin(), kFormats.end(), f) == kFormats.end())
      fail(ExitCode::usage, "--format: unknown format '{}' (valid: {})", f, joined(kFormats));
    o.formats.push_back(f);
  }
  if (o.formats.empty()) fail(ExitCode::usage, "--format: empty list (valid: {})", joined(kFormats));

  if (run.count("--out") && r.out.empty()) fail(ExitCode::usage, "--out: empty path; give a results folder, or none");
  if (r.out == "none") {
    o.no_files = true;
    if (!run.count("--format")) o.formats = {"table"};  // --out none alone: the table; with a file format, an error
  } else {
    o.out_dir = r.out;
  }
  if (run.count("--baseline") && !is_known_implementation(r.baseline))
    fail(ExitCode::usage, "--baseline: unknown implementation '{}' (valid: {})", r.baseline, valid_implementations());
  o.baseline = r.baseline;
  o.check = r.check > 0;
  if (r.check > 1)
    o.notes.push_back(fmt::format("-c {}: ccbench checks every timed iteration of every size ({} per size, -n)",
                                  r.check, o.iterations));
  o.ring_order = parse_ring_order(r.ring_order);
  o.tree = r.tree == "binary" ? schedule::TreeShape::binary : schedule::TreeShape::double_binary;
  if (o.ring_order.kind == RingOrderKind::list && o.groups != "world")
    fail(ExitCode::usage, "--ring-order {}: a list of ranks orders the whole run; with --groups {} give rank or topo "
         "(each group then builds its own ring)", r.ring_order, o.groups);
  if (!o.ceilings_file.empty() && o.measure_ceilings)
    fail(ExitCode::usage, "--ceilings and --measure-ceilings exclude each other: give one");
  const bool writes_run_json =
      !o.no_files && std::find(o.formats.begin(), o.formats.end(), "json") != o.formats.end();
  if (!o.model_topology.empty() && !writes_run_json)
    fail(ExitCode::usage, "--model writes its columns into run.json: keep json in --format (the default has it) "
                          "and an output folder (not --out none)");
  o.accept_rules = acceptance_rules(r.accept, r.min_busbw, "--accept");
  o.history_db = history_path(r.db);
  o.telemetry = telemetry::finish_options(r.telemetry);
  o.overlap = parse_overlap(r.overlap);
  o.nccl_configs = nccl_config_combinations(r.nccl_config);
  if (o.overlap.kind != LoadKind::none && (o.device == DeviceChoice::cpu || o.groups != "world"))
    fail(ExitCode::usage, "--overlap {} runs on GPU ranks over the whole job: not with {}", r.overlap,
         o.device == DeviceChoice::cpu ? "--device cpu" : "--groups " + o.groups);
  read_nccl_tests_environment(o);
}

// `compare`: two runs (or one with --pair), noise-aware; --against-fleet uses a history.
struct RawCompare {
  std::vector<std::string> pairs;
  bool against_fleet = false;
  std::string fleet_db;
};

CLI::App* add_compare_command(CLI::App& app, CompareRequest& cmp, RawCompare& r) {
  CLI::App* compare = app.add_subcommand("compare", "compare two runs (results.csv files or folders), noise-aware");
  compare->add_option("before", cmp.runs, "BEFORE [AFTER]: results.csv files or results folders (one run with --pair)")
      ->required()->expected(1, 2)->type_name("PATH");
  compare->add_option("--tolerance", cmp.options.tolerance,
                      "slowdown below which nothing is flagged, whatever the noise [0.05]")
      ->check(real_range("--tolerance", 0, 1, true, "a fraction from 0 to below 1"))->type_name("FLOAT");
  compare->add_flag("--allow-missing", cmp.options.allow_missing, "a baseline row absent now is not a failure");
  compare->add_flag("--allow-skipped", cmp.options.allow_skipped, "a row ok before and skipped now is not a failure");
  compare->add_flag("--count-isolated", cmp.options.count_isolated,
                    "count a slowdown at one size whose neighbouring sizes are not slower");
  compare->add_option("--pair", r.pairs, "FIELD=BEFORE:AFTER, e.g. impl=ring:nccl or transport=tcp:shm (repeatable)");
  compare->add_option("--format", cmp.options.format, "table, md or json [table]");
  compare->add_flag("--against-fleet", r.against_fleet, "compare one run with the median of the other nodes of its kind");
  compare->add_option("--db", r.fleet_db, "history for --against-fleet [CCBENCH_DB]")->type_name("PATH");
  return compare;
}

CompareRequest finish_compare(CompareRequest cmp, const RawCompare& r) {
  for (const std::string& p : r.pairs) cmp.options.pairs.push_back(parse_compare_pair(p));
  if (r.against_fleet) {
    cmp.fleet_db = history_path(r.fleet_db);
    if (cmp.fleet_db.empty()) fail(ExitCode::usage, "compare --against-fleet: give --db FILE or set CCBENCH_DB");
    if (cmp.runs.size() != 1) fail(ExitCode::usage, "compare --against-fleet: give one run (the node to check)");
  } else if (cmp.runs.size() == 1 && r.pairs.empty()) {
    fail(ExitCode::usage, "compare: one run given; give BEFORE and AFTER, or one run with --pair FIELD=A:B");
  }
  return cmp;
}

// `history`: the runs of a store, or one case's trend.
struct RawHistory {
  std::string db, size;
};

CLI::App* add_history_command(CLI::App& app, HistoryRequest& hist, RawHistory& r) {
  CLI::App* histcmd = app.add_subcommand("history", "list the runs of a history, or a case's trend");
  histcmd->add_option("--db", r.db, "SQLite history [CCBENCH_DB]")->type_name("PATH");
  histcmd->add_option("--host", hist.filter.host, "only this host's runs");
  histcmd->add_option("--collective", hist.filter.collective, "trend of this collective");
  histcmd->add_option("--impl", hist.filter.impl, "trend of this implementation");
  histcmd->add_option("--transport", hist.filter.transport, "trend over this transport");
  histcmd->add_option("--dtype", hist.filter.dtype, "trend of this data type");
  histcmd->add_option("--size", r.size, "trend at this size (K/M/G = powers of 1024)")->type_name("SIZE");
  histcmd->add_option("--add", hist.add, "store these results folders or files (runs made without --db)");
  return histcmd;
}

HistoryRequest finish_history(HistoryRequest hist, const RawHistory& r) {
  hist.db = history_path(r.db);
  if (hist.db.empty()) fail(ExitCode::usage, "history: give --db FILE or set CCBENCH_DB");
  if (!r.size.empty()) hist.filter.bytes = parse_size(r.size, "--size");
  return hist;
}

// `accept`: results checked against rules.
struct RawAccept {
  std::string rules_file, min_busbw;
};

CLI::App* add_accept_command(CLI::App& app, AcceptRequest& acc, RawAccept& r) {
  CLI::App* acceptcmd = app.add_subcommand("accept", "check results against acceptance rules; exit 4 when one fails");
  acceptcmd->add_option("runs", acc.runs, "results.csv files or results folders")->required()->type_name("PATH");
  acceptcmd->add_option("--rules", r.rules_file, "rules file (YAML; examples: docs/examples/rules/)")
      ->type_name("PATH");
  acceptcmd->add_option("--min-busbw", r.min_busbw, "busbw every size from 1 MiB must reach, GB/s")->type_name("GBPS");
  acceptcmd->add_option("--junit", acc.junit, "also write the verdicts as JUnit XML to this file")->type_name("PATH");
  return acceptcmd;
}

AcceptRequest finish_accept(AcceptRequest acc, const RawAccept& r) {
  acc.rules = acceptance_rules(r.rules_file, r.min_busbw, "--rules");
  if (acc.rules.empty()) fail(ExitCode::usage, "accept: give --rules FILE.yaml, --min-busbw GBPS or both");
  return acc;
}

std::string full_command_line(int argc, const char* const* argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i) s += ' ';
    s += argv[i];
  }
  return s;
}

bool is_help(const std::string& a) { return a == "--help" || a == "-h"; }

// `ccbench model` options as typed.
struct RawModel {
  std::string topology, collective = "allreduce", impl, minbytes = "8", maxbytes = "1G", stepfactor = "2", format = "table";
  int nodes = 0;
};

void add_model_options(CLI::App& cmd, RawModel& r) {
  cmd.add_option("--topology", r.topology, "topology file (YAML) or preset name (topologies/presets)")->required();
  cmd.add_option("--collective", r.collective, "allreduce, allgather, reducescatter (comma list) [allreduce]");
  cmd.add_option("--impl", r.impl, "algorithms: ring,tree,hier,hier-leader,oneshot,twoshot,nccl-ring,nccl-tree [all]");
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
  // `-V` alone is the version; `-V N` is nccl-tests' device CTA count, an option of `run`.
  const bool version_flag = !args.empty() && (args[0] == "--version" || (args[0] == "-V" && args.size() == 1));
  bool top_level_flag = !args.empty() && (version_flag || is_help(args[0]) || args[0] == "--list" ||
                                          args[0] == "--help-all");
  if (!top_level_flag && (args.empty() || !kSubcommands.count(args[0]))) args.insert(args.begin(), "run");

  CLI::App app{"ccbench: collective-communication benchmark (NCCL and MPI against our ring and tree)", "ccbench"};
  app.set_help_all_flag("--help-all", "help for every subcommand");
  bool version = false, list = false;
  app.add_flag("-V,--version", version, "print the version and the parts built in");
  app.add_flag("--list", list, "list the implementations this build knows");
  app.require_subcommand(0, 1);

  RunOptions o;
  RawRun raw;
  CLI::App* run = app.add_subcommand("run", "measure collectives (the default: `ccbench [run] OPTIONS`)");
  add_sweep_options(*run, o, raw);
  add_run_control_options(*run, o, raw);
  IbFlags ib;  // shared with `links` (harness/app/links_cli.h)
  ib.add(*run, true);
  add_nccl_tests_options(*run, o, raw);
  add_nccl_tests_refusals(*run, o);

  CompareRequest cmp;
  RawCompare rawcmp;
  CLI::App* compare = add_compare_command(app, cmp, rawcmp);
  HistoryRequest hist;
  RawHistory rawhist;
  CLI::App* histcmd = add_history_command(app, hist, rawhist);
  AcceptRequest acc;
  RawAccept rawacc;
  CLI::App* acceptcmd = add_accept_command(app, acc, rawacc);

  CLI::App* listcmd = app.add_subcommand("list", "list the implementations this build knows");
  TopoRequest topo;
  CLI::App* topocmd = app.add_subcommand("topo", "describe every host of the job: CPUs, GPUs, PCIe and NVLink paths, NICs; --expect checks it");
  topocmd->add_flag("--json", topo.json, "print JSON instead of text");
  topocmd->add_option("--dump", topo.dump, "write this node as a topology file (YAML) to FILE, - for stdout");
  topocmd->add_option("--out", topo.out, "where to write the gathered topology (JSON), none for nowhere [topology.json]");
  topocmd->add_option("--expect", topo.expect, "compare every host with an expected shape (YAML); exit 4 on a difference");
  RawModel rawmodel;
  CLI::App* modelcmd = app.add_subcommand("model", "predict collective times on a described system (topology file)");
  add_model_options(*modelcmd, rawmodel);
  LinksCommand links(app);  // `ccbench links` (harness/app/links_cli.h)

  // CLI11's parse(vector&) consumes its argument from the back: it takes the list in reverse.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::Success& e) {  // --help, --help-all: CLI11 renders the right subcommand's help
    std::ostringstream out, err;
    app.exit(e, out, err);
    // `ccbench --help`: `run` is the default subcommand, so its options come with the overview.
    std::string text = out.str() + err.str();
    if (!args.empty() && is_help(args[0])) text += "\n" + run->help();
    return HelpRequest{text};
  } catch (const CLI::ExtrasError& e) {
    // CLI11 lists the leftovers in its reversed order; say them as typed.
    std::vector<std::string> extra = app.remaining();
    for (CLI::App* sub : app.get_subcommands()) {
      auto more = sub->remaining();
      extra.insert(extra.end(), more.begin(), more.end());
    }
    // Sweeps and the tuner need a fresh launch per setting (NCCL reads most once per process).
    for (const std::string& x : extra) {
      if (x.rfind("--sweep-env", 0) == 0)
        fail(ExitCode::usage, "--sweep-env: every setting needs fresh processes; run scripts/sweep.py --sweep-env "
             "NAME=v1,v2,... -- <ccbench options> (see docs/guides/tuning.md)");
      if (x == "tune")
        fail(ExitCode::usage, "tune: run scripts/tune.py --space FILE.yaml --budget MINUTES -- <ccbench options> "
             "(see docs/guides/tuning.md)");
    }
    fail(ExitCode::usage, "unknown argument(s): {} (see ccbench --help)", fmt::join(extra, " "));
  } catch (const CLI::ParseError& e) {
    fail(ExitCode::usage, "{} (see ccbench --help)", e.what());
  }
  if (version) return VersionRequest{};
  if (list || *listcmd) return ListRequest{};
  if (*topocmd) return topo;
  if (*modelcmd) return finish_model_options(rawmodel, *modelcmd);
  if (links.given()) return links.finish(full_command_line(argc, argv));
  if (*histcmd) return finish_history(hist, rawhist);
  if (*acceptcmd) return finish_accept(acc, rawacc);
  if (*compare) return finish_compare(cmp, rawcmp);
  finish_run_options(*run, raw, o);
  o.ib = ib.finish(*run);
  o.command_line = full_command_line(argc, argv);
  return o;
}

}  // namespace ccbench
