#include "harness/app/run_cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "collectives/implementation.h"
#include "core/build_config.h"
#include "core/error.h"
#include "core/suggest.h"
#include "harness/app/results_cli.h"
#include "harness/app/shared_options.h"
#include "harness/engine/sizes.h"
#include "core/transport_names.h"
#if CCBENCH_HAVE_NCCL
#include "collectives/nccl/nccl_library.h"
#endif

namespace ccbench {

namespace {

constexpr long long kMaxMisalignElements = 1 << 20;
constexpr int kMaxRank = 1 << 30;
constexpr const char* kTrainingGroup = "Training workloads";
constexpr const char* kNcclTestsGroup = "nccl-tests flags (same meaning; a value ccbench cannot honour is refused)";
const std::vector<std::string> kFormats = {"table", "csv", "json", "md"};

// "nccl,ring,tree,best": what a run on `device` takes without --impl, in the registry's order.
std::string default_implementations(Device device) {
  std::vector<std::string> out;
  for (const ImplInfo& i : implementations())
    if (i.device == device && i.by_default) out.push_back(i.name);
  return fmt::format("{}", fmt::join(out, ","));
}

// Whether `impls` (valid names, or all or default) names any of `wanted`.
bool names_any(const std::vector<std::string>& impls, std::initializer_list<ImplId> wanted) {
  return std::any_of(impls.begin(), impls.end(), [&](const std::string& i) {
    const auto id = parse_impl_id(i);
    return id && std::find(wanted.begin(), wanted.end(), *id) != wanted.end();
  });
}

[[noreturn]] void refuse(const std::string& label, long long value, const std::string& instead) {
  fail(ExitCode::usage, "{} {}: {}", label, value, instead);
}

// An nccl-tests flag of which ccbench honours one value, `accepted`; any other is refused with
// `instead`.
auto only(long long accepted, std::string instead) {
  return [accepted, instead](const std::string& label, long long v) -> std::string {
    if (v != accepted) refuse(label, v, instead);
    return "";
  };
}

// nccl-tests' environment: NCCL_TESTS_MIN_BW is the threshold of the average bus bandwidth;
// NCCL_TESTS_SPLIT(_MASK) would split the ranks into groups, which --groups does instead.
void read_nccl_tests_environment(RunOptions& o) {
  for (const char* var : {"NCCL_TESTS_SPLIT_MASK", "NCCL_TESTS_SPLIT"})
    if (const char* v = std::getenv(var))
      fail(ExitCode::usage,
           "{}='{}': nccl-tests' sub-groups by a bit mask of rank numbers are not taken; unset {} "
           "and run sub-groups with --groups (node, pairs, rails or a file of groups)",
           var, v, var);
  if (const char* v = std::getenv("NCCL_TESTS_MIN_BW")) {
    double bw = 0;
    auto [end, ec] = std::from_chars(v, v + std::char_traits<char>::length(v), bw);
    if (ec != std::errc() || *end != '\0' || !std::isfinite(bw) || bw <= 0)
      fail(ExitCode::usage, "NCCL_TESTS_MIN_BW='{}' is not valid; expected a bus bandwidth in GB/s > 0", v);
    o.min_busbw_gbps = bw;
  }
}

}  // namespace

std::vector<Rule> acceptance_rules(const std::string& file, double min_busbw, const char* file_flag) {
  std::vector<Rule> rules = file.empty() ? std::vector<Rule>{} : load_rules(file, file_flag, rule_vocabulary());
  if (min_busbw > 0) rules.push_back(min_busbw_rule(min_busbw));
  return rules;
}

RunCommand::RunCommand(CLI::App& app)
    : sub_(app.add_subcommand("run", "measure collectives (the default: `ccbench [run] OPTIONS`)")), set_(*sub_) {
  add_sweep_options();
  add_what_options();
  add_control_options();
  telemetry::add_options(set_, o_.telemetry);
  add_training_options();
  add_ib_options(set_, o_.ib, true);
  add_ofi_options(set_, o_.ofi);
  set_.group(kNcclTestsGroup);
  add_nccl_tests_options();
  add_nccl_tests_refusals();
  set_.group("");
}

void RunCommand::add_sweep_options() {
  add_min_bytes(set_, o_.sweep.min_bytes);
  add_max_bytes(set_, o_.sweep.max_bytes, "GPU: 1G, CPU: 64M, capped by free memory");
  add_step_factor(set_, o_.sweep.factor);
  set_.size({"-i,--stepbytes", "add this many bytes each step (instead of -f)", "", "same"}, o_.sweep.increment);
  add_iterations(set_, o_.iterations, o_.warmup);
  set_.integer({"-c,--check",
                "check results: N >= 1 = every timed iteration of every size (nccl-tests: N checked iterations), "
                "0 = off",
                "", "0 turns the checks off; N >= 1 checks every timed iteration of every size"},
               check_, 0, 1000000, "0 (off) or a count of checked iterations (on)");
  set_.integer({"-r,--root", "root rank of broadcast, reduce, gather, scatter", "", "same"}, o_.root, 0, kMaxRank,
               "a rank number");
  set_.integer({"-G,--cudagraph", "also time CUDA-graph replay: launches of a graph of -n iterations (0 = eager only)",
                "", "same: CUDA-graph figures are reported apart, labelled graph"},
               o_.graph_launches, 0, 100000, "the number of graph launches");
}

void RunCommand::add_what_options() {
  set_.list({"--collective", "collectives to measure, comma-separated"}, o_.collectives, collective_names());
  set_.list({"-d,--datatype", "data types, comma-separated", "", "same; several may be given"}, o_.dtypes,
            data_type_names());
  set_.list({"-o,--op", "reduction operations, comma-separated", "", "same; several may be given"}, o_.ops,
            reduce_op_names());
  set_.text({"--impl", "implementations, comma-separated; ccbench list says what each does",
             fmt::format("default: {} on GPUs; {} on CPUs", default_implementations(Device::gpu),
                         default_implementations(Device::cpu))},
            impl_, "LIST", valid_implementations() + ", all or default");
  add_device(set_, o_.device);
  add_run_transport(set_, o_.transport);
  set_.integer({"--emulate-nodes",
                "split each node's ranks into N emulated nodes in rank order (inter-node paths on "
                "one host)"},
               o_.emulate_nodes, 1, 1 << 20, "the number of emulated nodes per node");
  set_.text({"--ring-order",
             "the ring of our ring implementations; topo: nodes contiguous, NUMA neighbours "
             "adjacent; a list of ranks such as 0,2,1,3, or a file holding one"},
            ring_order_, "ORDER", "rank, topo, a list or a file");
  set_.choice({"--tree", "all-reduce trees of `tree`: double = NCCL's double binary tree, binary = one tree"}, o_.tree,
              cli::Names<schedule::TreeShape>{
                  {{"double", schedule::TreeShape::double_binary}, {"binary", schedule::TreeShape::binary}}, nullptr});
  set_.choice({"--in-place", "measure in place (yes), out of place (no) or both"}, o_.in_place,
              cli::Names<InPlaceChoice>{
                  {{"yes", InPlaceChoice::yes}, {"no", InPlaceChoice::no}, {"both", InPlaceChoice::both}}, nullptr});
  set_.integer({"--seed", "seed of the input patterns"}, o_.seed, 0, UINT64_MAX, "a seed");
  set_.choice(
      {"--pattern",
       "input values: integer = small whole numbers, exact in every type; precision = values "
       "that need each floating type's whole mantissa and exponent range, signed zeros, NaN, "
       "subnormals (docs/design.md#correctness)"},
      o_.pattern,
      cli::Names<InputPattern>{{{"integer", InputPattern::integer}, {"precision", InputPattern::precision}}, nullptr});
  set_.text({"--groups",
             "run in sub-groups of ranks; pairs: every pair, in rounds of pairs on disjoint nodes, the slow "
             "links put on the host they share; bisect: the culprit search, halves of the nodes against the "
             "whole job; a file holds one group per line"},
            o_.groups, "KIND|FILE", "world, node, pairs, rails, bisect or a file");
  set_.flag({"--serial",
             "with --groups: one group at a time (pairs: one pair at a time instead of rounds of pairs on "
             "disjoint nodes, for an oversubscribed fabric; bisect: a step's halves one after the other)"},
            o_.serial);
  set_.number({"--group-outlier-threshold",
               "with --groups: flag a group below this fraction of the median busbw of "
               "like groups; pairs: a pair below it of the healthy pairs is slow; bisect: "
               "a group is healthy when the whole job is below it of the group's busbw"},
              o_.group_outlier_threshold, {.lo = 0.01, .hi = 1, .what = "a fraction"}, "FRACTION");
}

void RunCommand::add_control_options() {
  add_timeout(set_, o_.timeout);
  set_.integer({"-N,--cycles,--run_cycles", "repeat the sweep N times, 0 = until stopped (burn-in)", "", "same"},
               o_.cycles, 0, 1 << 30, "the number of sweeps (0 = until stopped)");
  add_out(set_, out_);
  add_overwrite(set_, o_.overwrite);
  set_.list({"--format", "outputs, comma-separated", "all"}, formats_,
            cli::Names<std::string>{{{"table", "table"}, {"csv", "csv"}, {"json", "json"}, {"md", "md"}}, nullptr},
            false);
  set_.value({"--baseline", "implementation the summary compares with", "nccl on GPUs, mpi on CPUs"}, "NAME",
             valid_implementations(), "",
             [this](const std::string& v) { o_.baseline = name(parse_impl_id_for(v, "--baseline")); });
  set_.flag({"--share-gpus", "allow several ranks on one GPU"}, o_.share_gpus);
  set_.value({"--nccl-library",
              "the NCCL library to load (as CCBENCH_NCCL_LIBRARY); run.json names its file and "
              "version",
              "libnccl.so.2 on the library path"},
             "FILE", "a file name or path of an NCCL library", "", [](const std::string& v) {
#if CCBENCH_HAVE_NCCL
               if (v.empty() || (v.find('/') != std::string::npos && !std::filesystem::is_regular_file(v)))
                 fail(ExitCode::usage,
                      "--nccl-library: '{}' is no file; give the path of an NCCL library "
                      "(libnccl.so.2) or a name the dynamic linker finds",
                      v);
               set_nccl_library_path(v);
#else
               fail(ExitCode::usage, "--nccl-library {}: this ccbench was built without NCCL", v);
#endif
             });
  set_.flag({"--quiet", "no progress line on stderr"}, o_.quiet);
  set_.number({"--progress-interval", "seconds between progress lines when stderr is not a terminal"},
              o_.progress_interval_s, {.lo = 0.01, .hi = 3600, .what = "seconds"}, "SECONDS");
  set_.text({"--accept", "acceptance rules (YAML) checked on the results; exit 4 when one fails"}, accept_, "FILE");
  set_.number({"--min-busbw", "busbw every size from 1 MiB must reach (as NCCL_TESTS_MIN_BW)", "none"}, min_busbw_,
              {.lo = 0, .what = "GB/s", .lo_open = true}, "GBPS");
  add_db(set_, o_.history_db, "append the run to this history: an SQLite file, or a PostgreSQL URL (postgresql://...)");
  add_metrics(set_, o_.metrics_file, kMetricsHelp);
  set_.text({"--ceilings", "links.json of `ccbench links`: run.json rows get busbw / link ceiling"}, o_.ceilings_file,
            "FILE");
  set_.text({"--model",
             "topology file or preset: run.json rows get the model's predicted time and busbw and "
             "measured / predicted"},
            o_.model_topology, "TOPOLOGY");
  set_.flag({"--measure-ceilings", "measure the link ceilings first (links.json, efficiency)"}, o_.measure_ceilings);
  set_.number({"--straggler-threshold",
               "name a rank whose median time is this fraction behind the median rank's "
               "(0.2 = 20 %)"},
              o_.straggler_threshold, {.lo = 0.001, .hi = 100, .what = "a fraction"}, "FRACTION");
}

void RunCommand::add_training_options() {
  set_.group(kTrainingGroup);
  set_.value({"--overlap",
              "a compute load on every GPU's own stream through each row's timed phases: gemm[:N] = "
              "cuBLAS bf16 GEMM N^3, membw[:SIZE] = a copy kernel between two buffers of SIZE; rows get "
              "its throughput alone and during"},
             "KIND", overlap_valid(), "none", [this](const std::string& v) {
               o_.overlap = parse_overlap(v);
               overlap_ = v;
             });
  overlap_room_option_ =
      set_.integer({"--overlap-room",
                    "SMs the --overlap load leaves free for the collectives; our kernels' grids are "
                    "capped to them while it runs (NCCL's: --nccl-config maxCTAs=N); 0 = the load takes "
                    "every SM"},
                   overlap_room_, 0, kMaxRoomSms, "a number of SMs");
  set_.repeatable({"--nccl-config",
                   "one NCCL communicator per combination of the values given, its rows labelled in "
                   "the nccl_config column; repeat it for more keys (every combination is measured); "
                   "the value default leaves a key as NCCL has it"},
                  "KEY=V1,V2", nccl_config_valid(), "", [this](const std::string& v) { nccl_config_.push_back(v); });
  set_.group("");
}

void RunCommand::nccl_flag(const cli::Spec& spec, long long lo, long long hi, const std::string& shown_default,
                           std::function<std::string(const std::string& label, long long value)> use) {
  const std::string label = cli::flag_label(spec.names);
  const std::string meaning = spec.help;
  set_.value(spec, "INT", fmt::format("{} to {}", lo, hi), shown_default,
             [this, label, lo, hi, meaning, use](const std::string& v) {
               const long long n = cli::parse_whole_number(v, label, lo, hi, meaning);
               if (std::string note = use(label, n); !note.empty()) o_.notes.push_back(note);
             });
}

// The nccl-tests flags with a meaning here.
void RunCommand::add_nccl_tests_options() {
  const std::string one_gpu =
      "ccbench runs one thread and one GPU per process; for more GPUs start more MPI ranks (mpirun -np N, one per GPU)";
  nccl_flag({"-t,--nthreads", "threads per process: 1 (one rank per GPU)", "", "1 only: " + one_gpu}, 0, 1 << 20, "1",
            only(1, one_gpu));
  nccl_flag({"-g,--ngpus", "GPUs per thread: 1 (one rank per GPU)", "", "1 only: " + one_gpu}, 0, 1 << 20, "1",
            only(1, one_gpu));
  nccl_flag({"-a,--average", "time reported over ranks: 0 = rank 0, 1 = mean, 2 = fastest, 3 = slowest", "",
             "same; the default is 3 (the slowest rank: a collective is done when its last rank is)"},
            0, 3, "3", [this](const std::string&, long long v) {
              o_.rank_time = static_cast<RankTime>(v);
              return std::string();
            });
  nccl_flag({"-m,--agg_iters",
             "collectives issued back to back per timed iteration (NCCL: in one group); times are "
             "per collective",
             "", "same, up to 1024"},
            1, kMaxAggIters, "1", [this](const std::string&, long long v) {
              o_.agg_iters = static_cast<int>(v);
              return std::string();
            });
  const std::string blocking =
      "the time column is always the back-to-back batch (-z 0); the blocking figures (every single iteration waited "
      "for, and started after a barrier) are the median, min, p95 and cv columns";
  nccl_flag({"-z,--blocking", "0 = non-blocking, 1 = blocking: see the median, min, p95 and cv columns", "",
             "0 and 1 accepted: " + blocking},
            0, 1, "0", [blocking](const std::string& label, long long v) {
              return v ? fmt::format("{} 1: {}", label, blocking) : std::string();
            });
  nccl_flag(
      {"-R,--local_register",
       "buffer registration: 0 = none, 2 = symmetric windows (--impl nccl-symm instead "
       "of nccl)",
       "", "0 and 2 (nccl-symm stands in for nccl); 1 refused"},
      0, 2, "0", [this](const std::string& label, long long v) {
        if (v == 1)
          refuse(label, v,
                 "buffers registered with ncclCommRegister are not offered; -R 2 measures NCCL with "
                 "symmetric registered windows (--impl nccl-symm), -R 0 plain buffers");
        local_register_ = static_cast<int>(v);
        return std::string(v == 2 ? "-R 2: nccl-symm (NCCL on symmetric registered windows) stands in for nccl" : "");
      });
  nccl_flag({"-u,--unalign", "start the send and receive buffers this many elements late", "", "same"}, 0,
            kMaxMisalignElements, "0", [this](const std::string&, long long v) {
              o_.misalign = static_cast<int>(v);
              return std::string();
            });
  nccl_flag({"-I,--per_iter_timing", "per-iteration timing: always on (median, min, p95, cv columns)", "",
             "always on: single iterations are timed too"},
            0, 1, "0", [](const std::string& label, long long v) {
              return v ? label + " 1: ccbench always times single iterations too: the median, min, p95 and cv columns"
                       : std::string();
            });
  nccl_flag({"-K,--per_iter_skip",
             "leave the first N single iterations out of the statistics (run as N more warm-up "
             "iterations)",
             "", "N more warm-up iterations"},
            0, 1000000, "0", [this](const std::string& label, long long v) {
              per_iter_skip_ = static_cast<int>(v);
              return v ? fmt::format("{} {}: {} more warm-up iterations, so that no statistic includes them", label, v,
                                     v)
                       : std::string();
            });
  nccl_flag({"-p,--parallel_init", "parallel NCCL set-up by threads: one thread, nothing to do", "",
             "accepted; one thread per process, so nothing to do"},
            0, 1, "0", [](const std::string& label, long long v) {
              return v ? label + " 1: one thread per process: there is nothing to initialise in parallel"
                       : std::string();
            });
}

// The nccl-tests switches for things ccbench does not offer: their "off" value is accepted.
void RunCommand::add_nccl_tests_refusals() {
  const std::string cpu_time =
      "CPU launch time is not reported; the time columns are device time (CUDA events) on "
      "GPU ranks and wall-clock time on CPU ranks (--device cpu)";
  nccl_flag({"-C,--report_cputime", "report CPU time: 0", "", "0 only: " + cpu_time}, 0, 1, "0", only(0, cpu_time));
  const std::string stamps =
      "rows carry no timestamp; run.json holds the start time (context.started_utc) and the "
      "results folder is named after it";
  nccl_flag({"-S,--report_timestamps", "timestamp per line: 0", "", "0 only: " + stamps}, 0, 1, "0", only(0, stamps));
  const std::string memory =
      "no memory report is printed; 'ccbench topo' shows each GPU's memory, and a note says "
      "when free memory caps -e";
  nccl_flag({"-M,--memory", "memory usage report: 0", "", "0 only: " + memory}, 0, 1, "0", only(0, memory));
  const std::string stream = "collectives run on each rank's own stream; the default stream is not offered";
  nccl_flag({"-y,--stream_null", "use the default CUDA stream: 0", "", "0 only: " + stream}, 0, 1, "0",
            only(0, stream));
  nccl_flag({"-x,--cta_policy", "NCCL CTA policy: set NCCL_CTA_POLICY instead", "",
             "refused: set NCCL_CTA_POLICY in the environment (mpirun -x NCCL_CTA_POLICY)"},
            0, 2, "", [](const std::string& label, long long v) -> std::string {
              refuse(label, v,
                     fmt::format("set it for NCCL through the environment instead: NCCL_CTA_POLICY={} (add "
                                 "-x NCCL_CTA_POLICY to mpirun)",
                                 v));
            });
  const std::string device_api =
      "NCCL's device-API kernels are not offered; ccbench's own device kernels are --impl "
      "ring,tree,oneshot,twoshot,ce ('ccbench list')";
  nccl_flag({"-D,--device_implementation", "NCCL device-API implementation: 0", "", "0 only: " + device_api}, 0, 1000,
            "0", only(0, device_api));
  nccl_flag({"-V,--device_cta_count", "CTAs of -D kernels: see CCBENCH_GPU_CHANNELS (ccbench's version: --version)", "",
             "refused: there are no -D kernels; CCBENCH_GPU_CHANNELS sets the blocks of ccbench's own"},
            1, 128, "", [](const std::string& label, long long v) -> std::string {
              refuse(label, v,
                     "there are no -D kernels here; the blocks of ccbench's own kernels are set with "
                     "CCBENCH_GPU_CHANNELS");
            });
  set_.value({"-J,--output_file", "also write run.json to this file", "", "JSON only: run.json's content"}, "PATH",
             "a name ending in .json", "", [this](const std::string& v) {
               auto dot = v.rfind('.');
               std::string ext = dot == std::string::npos ? "" : v.substr(dot + 1);
               std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
               if (ext != "json")
                 fail(ExitCode::usage,
                      "-J/--output_file: '{}' does not end in .json; only JSON is written (as "
                      "nccl-tests, the type comes from the suffix)",
                      v);
               o_.json_file = v;
             });
}

// The implementation list: names, all or default; -R 2 puts nccl-symm in place of nccl.
std::vector<std::string> RunCommand::implementation_list() {
  if (impl_ == "all" || impl_ == "default") return {impl_};
  std::vector<std::string> impls;
  for (const std::string& text : cli::split_list(impl_)) {
    ImplId id = parse_impl_id_for(text, "--impl", ", or all");
    if (o_.nccl_symmetric && id == ImplId::nccl) id = ImplId::nccl_symm;
    const std::string n(name(id));
    if (std::find(impls.begin(), impls.end(), n) == impls.end()) impls.push_back(n);
  }
  if (impls.empty()) fail(ExitCode::usage, "--impl: empty list (valid: {}, or all)", valid_implementations());
  if (o_.nccl_symmetric && !names_any(impls, {ImplId::nccl_symm}))
    fail(ExitCode::usage, "-R 2 puts {} in place of {}, but --impl {} names no {} (add {}, or leave -R out)",
         name(ImplId::nccl_symm), name(ImplId::nccl), impl_, name(ImplId::nccl), name(ImplId::nccl));
  return impls;
}

void RunCommand::finish_sweep() {
  o_.max_given = sub_->count("--maxbytes") > 0;
  const bool factor_given = sub_->count("--stepfactor") > 0, inc_given = sub_->count("--stepbytes") > 0;
  if (factor_given && inc_given)
    fail(ExitCode::usage, "-f/--stepfactor and -i/--stepbytes exclude each other: give one");
  if (inc_given && o_.sweep.increment == 0)
    fail(ExitCode::usage, "-i/--stepbytes 0 never advances the sweep: give a size > 0");
  // Validate the sweep now, before MPI; without -e, against the largest default maximum (the
  // real default is chosen later from the device and its memory, never below -b).
  SweepSpec probe = o_.sweep;
  if (!o_.max_given) probe.max_bytes = std::max<std::uint64_t>(probe.min_bytes, std::uint64_t(1) << 30);
  sweep_sizes(probe);
}

void RunCommand::finish_outputs() {
  o_.formats = formats_;
  if (out_ == "none") {
    o_.no_files = true;
    if (!sub_->count("--format")) o_.formats = {"table"};  // --out none alone: the table; with a file format, an error
  } else {
    o_.out_dir = out_;
  }
  const bool writes_run_json =
      !o_.no_files && std::find(o_.formats.begin(), o_.formats.end(), "json") != o_.formats.end();
  if (!o_.model_topology.empty() && !writes_run_json)
    fail(ExitCode::usage,
         "--model writes its columns into run.json: keep json in --format (the default has it) "
         "and an output folder (not --out none)");
}

// The options given that act on GPU ranks only, as typed ("-G 5").
std::vector<std::string> RunCommand::given_gpu_options() const {
  std::vector<std::string> out;
  if (o_.graph_launches > 0) out.push_back(fmt::format("-G {}", o_.graph_launches));
  for (const std::string& c : nccl_config_) out.push_back("--nccl-config " + c);
  for (const char* flag : {"--nccl-library", "--share-gpus", "--gpudirect"})
    if (sub_->count(flag)) out.emplace_back(flag);
  return out;
}

// --tree, --ring-order and --baseline given for implementations an explicit --impl list leaves
// out: they would change nothing.
void RunCommand::refuse_unused_by_implementations() const {
  if (impl_ == "all" || impl_ == "default") return;
  if (sub_->count("--tree") && !names_any(o_.impls, {ImplId::tree}))
    fail(ExitCode::usage,
         "--tree shapes the trees of the tree implementation, and --impl {} names no tree: leave "
         "--tree out, or add tree",
         impl_);
  if (sub_->count("--ring-order") && !names_any(o_.impls, {ImplId::ring, ImplId::hier, ImplId::best}))
    fail(ExitCode::usage,
         "--ring-order orders the ring of ring, hier and best, and --impl {} names none of them: "
         "leave --ring-order out, or add ring",
         impl_);
  if (!o_.baseline.empty() && std::find(o_.impls.begin(), o_.impls.end(), o_.baseline) == o_.impls.end())
    fail(ExitCode::usage,
         "--baseline {}: the summary compares the implementations measured with it, and --impl {} "
         "does not measure it: add it to --impl, or name one of {}",
         o_.baseline, impl_, cli::joined(o_.impls));
}

// The rule: an option that would change nothing in this run is never ignored silently. Where the
// command line alone says so, it is refused here (exit 2, before MPI); where only the ranks can
// tell (--device auto finding CPU ranks), the run says so in a note at start-up and in run.json.
void RunCommand::refuse_options_that_do_not_apply() {
  o_.gpu_only = given_gpu_options();
  if (o_.device == DeviceChoice::cpu && !o_.gpu_only.empty())
    fail(ExitCode::usage,
         "{} act{} on GPU ranks, and --device cpu measures CPU ranks: leave {} out, or measure GPU "
         "ranks (--device gpu or auto)",
         cli::joined(o_.gpu_only), o_.gpu_only.size() == 1 ? "s" : "", o_.gpu_only.size() == 1 ? "it" : "them");
  if (o_.groups == "world")
    for (const char* flag : {"--serial", "--group-outlier-threshold"})
      if (sub_->count(flag))
        fail(ExitCode::usage,
             "{} acts on the groups of a --groups run, and this run has none (--groups world): "
             "leave {} out, or give --groups node, pairs, rails or a file",
             flag, flag);
  const auto t = parse_transport(o_.transport);
  const bool may_use_ib =
      t == Transport::ib || t == Transport::auto_select || t == Transport::net;  // auto, net: ib where it can
  for (const char* flag : {"--ib-dev", "--gid-index", "--ib-qps", "--ib-chunk", "--ib-mtu", "--ib-tc", "--ib-sl"})
    if (sub_->count(flag) && !may_use_ib)
      fail(ExitCode::usage,
           "{} sets up the ib transport, and --transport {} does not use it: leave {} out, or give "
           "--transport ib",
           flag, o_.transport, flag);
  for (const char* flag : {"--ofi-provider", "--ofi-domain", "--ofi-protocol"})
    if (sub_->count(flag) && t != Transport::ofi)
      fail(ExitCode::usage,
           "{} sets up the ofi transport, which only --transport ofi uses (this run: --transport "
           "{}): leave {} out, or give --transport ofi",
           flag, o_.transport, flag);
  refuse_unused_by_implementations();
}

RunOptions RunCommand::finish(const std::string& command_line) {
  finish_sweep();
  o_.warmup += per_iter_skip_;
  o_.nccl_symmetric = local_register_ == 2;
  o_.impls = implementation_list();
  finish_outputs();
  o_.check = check_ > 0;
  if (check_ > 1)
    o_.notes.push_back(fmt::format("-c {}: ccbench checks every timed iteration of every size ({} per size, -n)",
                                   check_, o_.iterations));
  o_.ring_order = parse_ring_order(ring_order_);
  if (o_.ring_order.kind == RingOrderKind::list && o_.groups != "world")
    fail(ExitCode::usage,
         "--ring-order {}: a list of ranks orders the whole run; with --groups {} give rank or topo "
         "(each group then builds its own ring)",
         ring_order_, o_.groups);
  if (!o_.ceilings_file.empty() && o_.measure_ceilings)
    fail(ExitCode::usage, "--ceilings and --measure-ceilings exclude each other: give one");
  o_.accept_rules = acceptance_rules(accept_, min_busbw_, "--accept");
  o_.history_db = history_path(o_.history_db);
  telemetry::check_options(o_.telemetry);
  o_.nccl_configs = nccl_config_combinations(nccl_config_);
  if (!o_.nccl_configs.empty() && impl_ != "all" && impl_ != "default" &&
      std::none_of(o_.impls.begin(), o_.impls.end(), [](const std::string& i) { return is_nccl(*parse_impl_id(i)); }))
    fail(ExitCode::usage,
         "--nccl-config sets up NCCL communicators, and --impl {} names no NCCL implementation (add "
         "nccl, nccl-ring, nccl-tree or nccl-symm)",
         impl_);
  o_.overlap.room_sms = overlap_room_;
  if (o_.overlap.kind == LoadKind::none && overlap_room_option_->count() > 0)
    o_.notes.push_back(fmt::format("--overlap-room {} changes nothing without --overlap", overlap_room_));
  if (o_.overlap.kind != LoadKind::none && (o_.device == DeviceChoice::cpu || o_.groups != "world"))
    fail(ExitCode::usage, "--overlap {} runs on GPU ranks over the whole job: not with {}", overlap_,
         o_.device == DeviceChoice::cpu ? "--device cpu" : "--groups " + o_.groups);
  validate_ib_options(o_.ib);
  o_.ofi.hmem = o_.ib.gpudirect;  // one flag for both: where GPU ranks' FIFO slots live
  refuse_options_that_do_not_apply();
  read_nccl_tests_environment(o_);
  o_.command_line = command_line;
  return o_;
}

}  // namespace ccbench
