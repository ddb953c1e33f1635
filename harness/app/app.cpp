#include "harness/app/app.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/git_hash.h"
#include "core/checks.h"
#include "core/error.h"
#include "harness/backend.h"
#include "harness/job/bootstrap.h"
#include "transports/gpu_paths.h"
#include "transports/ib/ib_transport.h"
#include "transports/nccl_path.h"
#include "transports/ofi/ofi_transport.h"
#include "harness/context.h"
#include "harness/results_dir.h"
#include "harness/min_bandwidth.h"
#include "harness/progress.h"
#include "harness/links/links.h"
#include "harness/model/run_model.h"
#include "harness/job/progress_board.h"
#include "harness/groups.h"
#include "harness/runner.h"
#include "harness/startup.h"
#include "harness/job/termination.h"
#include "harness/job/watchdog.h"
#include "results/compare.h"
#include "results/csv_reader.h"
#include "results/history.h"
#include "results/sink.h"
#include "results/stragglers.h"
#include "telemetry/sampler.h"
#include "topologies/discovery.h"

namespace ccbench {

int print_version(int launcher_rank) {
  if (launcher_rank == 0) fmt::print("{}\n", version_text());
  return 0;
}

int print_implementations(int launcher_rank) {
  if (launcher_rank != 0) return 0;
  fmt::print("{:<10} {:<4} {:<13} {}\n", "name", "on", "this build", "what it is");
  for (const ImplInfo& i : implementations())
    fmt::print("{:<10} {:<4} {:<13} {}\n", i.name, name(i.device), i.make ? "built in" : "not built in",
               i.make ? i.summary : i.missing);
  return 0;
}

int run_compare(const CompareRequest& req) {
  const ResultSet after = read_result_set(req.runs.back());
  ResultSet before = req.runs.size() > 1 ? read_result_set(req.runs.front()) : after;
  if (!req.fleet_db.empty()) {
    const History history(req.fleet_db);
    const std::string kind = node_kind(after.context), host = run_host(after.context);
    int hosts = 0;
    before.rows = history.fleet_median(kind, host, &hosts);
    before.context = Json::object();
    if (hosts == 0)
      fail(ExitCode::precondition, "compare --against-fleet: {} holds no run of another node of kind '{}' (this one: {})",
           req.fleet_db, kind, host);
    fmt::print("# against the fleet: median of the latest runs of {} other host{} of kind '{}' in {}\n", hosts,
               hosts == 1 ? "" : "s", kind, req.fleet_db);
  }
  CompareResult r = compare_runs(before.rows, after.rows, req.options, before.context, after.context);
  fmt::print("{}", r.text);
  return r.failures ? static_cast<int>(ExitCode::threshold) : 0;
}

int run_history(const HistoryRequest& req) {
  History history(req.db);
  for (const std::string& path : req.add) {
    const ResultSet run = read_result_set(path);
    fmt::print("# history: {} added as run {}\n", path,
               history.append(run.context, run.rows, "imported from " + run.csv_path, 0));
  }
  if (!req.add.empty()) return 0;
  const CaseFilter& f = req.filter;
  const bool one_case = !f.collective.empty() || !f.impl.empty() || !f.transport.empty() || !f.dtype.empty() || f.bytes;
  fmt::print("{}", one_case ? trend_table(history.trend(f)) : runs_table(history.runs(f.host)));
  return 0;
}

namespace {

// Prints the verdicts, writes the JUnit file when asked; exit code 4 when a rule failed.
ExitCode report_acceptance(const std::vector<Rule>& rules, const std::vector<ResultSet>& runs,
                           const std::string& junit, const std::string& suite) {
  const AcceptReport rep = evaluate_rules(rules, runs);
  fmt::print("{}", rep.text());
  if (!junit.empty()) {
    std::ofstream out(junit);
    out << rep.junit_xml(suite);
    if (!out.flush()) fail(ExitCode::usage, "--junit: cannot write {}: {}", junit, std::strerror(errno));
    fmt::print("# JUnit: {}\n", junit);
  }
  return rep.passed ? ExitCode::ok : ExitCode::threshold;
}

}  // namespace

// After the results files are closed: a failure here loses nothing of the run.
ExitCode append_to_history(const std::string& db, const Json& context, const std::vector<RunRecord>& rows,
                           const RunOutcome& outcome, const std::string& out_dir) {
  try {
    const long long id = History(db).append(context, rows, outcome.verdict, outcome.exit_code);
    fmt::print("# history: run {} appended to {}\n", id, db);
    return ExitCode::ok;
  } catch (const Error& e) {
    fmt::print(stderr, "ccbench: error: {}; the run is not in the history{}\n", e.what(),
               out_dir.empty() ? "" : fmt::format(", its results are complete in {}/", out_dir));
    return e.code();
  }
}

int run_accept(const AcceptRequest& req) {
  std::vector<ResultSet> runs;
  for (const std::string& r : req.runs) runs.push_back(read_result_set(r));
  return static_cast<int>(report_acceptance(req.rules, runs, req.junit, "results"));
}

namespace {

// Serialises the sinks between the main thread and the watchdog.
class LockedSink final : public ResultSink {
 public:
  explicit LockedSink(std::unique_ptr<ResultSink> inner) : inner_(std::move(inner)) {}
  void begin(const Json& c) override {
    std::lock_guard<std::timed_mutex> l(mu_);
    inner_->begin(c);
  }
  void add(const RunRecord& r) override {
    std::lock_guard<std::timed_mutex> l(mu_);
    if (!finished_) inner_->add(r);
  }
  void finish(const RunOutcome& o) override {
    std::lock_guard<std::timed_mutex> l(mu_);
    finish_locked(o);
  }
  void revise(const std::vector<RunRecord>& rows) override {
    std::lock_guard<std::timed_mutex> l(mu_);
    if (!finished_) inner_->revise(rows);
  }
  // From another thread: gives up after `wait` if the main thread holds the sink.
  bool try_finish(const RunOutcome& o, std::chrono::milliseconds wait) {
    if (!mu_.try_lock_for(wait)) return false;
    finish_locked(o);
    mu_.unlock();
    return true;
  }

 private:
  void finish_locked(const RunOutcome& o) {
    if (finished_) return;
    finished_ = true;
    inner_->finish(o);
  }
  std::unique_ptr<ResultSink> inner_;
  std::timed_mutex mu_;
  bool finished_ = false;
};

}  // namespace

namespace {

// -J FILE: proves the file writable before MPI starts (the JSON sink writes it from the start).
void prepare_json_file(const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(ExitCode::usage, "-J/--output_file: '{}' is a folder", path);
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) fail(ExitCode::usage, "-J/--output_file: cannot write '{}': {}", path, std::strerror(errno));
  std::fclose(f);
}

// The files the run writes, for the start-up block and the last line.
std::string results_written(const RunOptions& opts, const std::string& out_dir) {
  auto wants = [&](const char* f) { return std::find(opts.formats.begin(), opts.formats.end(), f) != opts.formats.end(); };
  std::string files;
  for (const auto& [format, file] : {std::pair{"csv", "results.csv"}, {"json", "run.json"}, {"md", "results.md"}})
    if (wants(format)) files += (files.empty() ? "" : ", ") + std::string(file);
  std::string s = opts.no_files ? "no results folder (--out none)"
                                : fmt::format("{}/ ({})", out_dir, files.empty() ? "no files: --format table" : files);
  if (!opts.json_file.empty()) s += fmt::format("; JSON also in {} (-J)", opts.json_file);
  return s;
}

ProgressPlan progress_plan(const RunOptions& opts, const SweepPlan& plan) {
  ProgressPlan p;
  p.collectives = opts.collectives;
  for (const ImplInfo* i : plan.impls) p.impls.push_back(i->name);
  p.dtypes = opts.dtypes.size();
  p.ops = opts.ops.size();
  p.sizes = plan.sizes.size();
  p.in_place = opts.in_place;
  p.cycles = opts.cycles;
  return p;
}

// Around the sinks --format asks for (rank 0): the -J file beside them, and the progress line
// on stderr in front of them all.
std::unique_ptr<ResultSink> with_json_file_and_progress(const RunOptions& opts, const SweepPlan& plan,
                                                        std::unique_ptr<ResultSink> sinks) {
  if (!opts.json_file.empty()) {
    auto both = std::make_unique<FanoutSink>();
    both->add_sink(std::move(sinks));
    both->add_sink(make_json_sink(opts.json_file));
    sinks = std::move(both);
  }
  if (opts.quiet) return sinks;
  ProgressSettings settings;
  settings.terminal = isatty(STDERR_FILENO) != 0;
  settings.interval = std::chrono::duration<double>(opts.progress_interval_s);
  return std::make_unique<ProgressSink>(std::move(sinks), progress_plan(opts, plan), settings);
}

// The largest size must fit kBuffersPerRank buffers (send, receive, expected, pristine input) in
// 1/kMemoryHeadroom of the free memory: the rest is for NCCL's and MPI's own buffers, the
// channels' slots and the other ranks of a node sharing host memory.
constexpr std::uint64_t kBuffersPerRank = 4;
constexpr std::uint64_t kMemoryHeadroom = 2;
// Default -e: 1 GiB on GPUs, the top size nccl-tests users commonly run; 64 MiB on CPU ranks,
// past the last-level cache yet quick on a 2-core CI machine.
constexpr std::uint64_t kDefaultGpuMaxBytes = 1ull << 30;
constexpr std::uint64_t kDefaultCpuMaxBytes = 64ull << 20;

// The arguments of a command line without the program path (which may differ between nodes).
std::string arguments_of(const std::string& command_line) {
  auto space = command_line.find(' ');
  return space == std::string::npos ? "" : command_line.substr(space + 1);
}

// Runs `step` on every rank; if it failed anywhere, every rank throws the agreed error.
template <typename F>
void agreed_step(MPI_Comm comm, const char* what, F&& step) {
  const Outcome agreed = agree_outcome(comm, run_catching(std::forward<F>(step)));
  if (agreed.code != ExitCode::ok) throw Error::agreed(agreed.code, fmt::format("{}: {}", what, agreed.message));
}

// GPU ranks (collective): why ib cannot carry their data between every pair, or nullopt when it
// can; rank 0 says so where auto therefore connects nodes over tcp.
std::optional<std::string> probe_gpu_ib(MPI_Comm world, const RankLayout& layout, const std::string& transport) {
  std::optional<std::string> why = agreed_ib_unavailable_reason(world, layout);
  if (auto note = ib_skipped_note(layout, transport, why); note && layout.rank == 0)
    fmt::print("# note: GPU ranks on different nodes: {}\n", *note);
  return why;
}

std::uint64_t min_over_ranks(MPI_Comm comm, std::uint64_t v) {
  std::uint64_t out = v;
  check_mpi(MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_MIN, comm), "MPI_Allreduce");
  return out;
}

// The implementations to run on `device`, and the requested ones that cannot run here.
SweepPlan plan_implementations(const RunOptions& opts, Device device) {
  SweepPlan plan;
  plan.device = device;
  if (opts.impls.size() == 1 && opts.impls[0] == "all") {
    for (const ImplInfo& i : implementations())
      if (i.device == device && i.make) plan.impls.push_back(&i);
    return plan;
  }
  if (opts.impls.size() == 1 && opts.impls[0] == "default") {
    // The baseline, our ring and tree, and our fastest kernel for each size.
    const std::string nccl = opts.nccl_symmetric ? "nccl-symm" : "nccl";  // -R 2
    const std::vector<std::string> names = device == Device::gpu ? std::vector<std::string>{nccl, "ring", "tree", "best"}
                                                                 : std::vector<std::string>{"mpi", "ring", "tree"};
    for (const std::string& n : names)
      if (const ImplInfo* i = find_implementation(n, device); i && i->make) plan.impls.push_back(i);
    return plan;
  }
  for (const std::string& n : opts.impls) {
    const ImplInfo* i = find_implementation(n, device);
    if (!i) {
      Device other = device == Device::cpu ? Device::gpu : Device::cpu;
      plan.skipped.emplace_back(n, fmt::format("{} runs on {} ranks and this run uses {} ranks (--device)", n,
                                               name(other), name(device)));
    } else if (!i->make) {
      plan.skipped.emplace_back(n, i->missing);
    } else {
      plan.impls.push_back(i);
    }
  }
  return plan;
}

// Formats that write a file need a folder to write it in.
void check_outputs(const RunOptions& opts) {
  if (!opts.no_files) return;
  for (const std::string& f : opts.formats)
    if (f != "table")
      fail(ExitCode::usage,
           "--out none writes no files, but --format {} asks for one: drop --out none, or use --format table", f);
}

bool wants(const RunOptions& opts, const char* format) {
  return std::find(opts.formats.begin(), opts.formats.end(), format) != opts.formats.end();
}

// Whether a results folder is needed: files not turned off, and a file format asked for.
bool writes_files(const RunOptions& opts) {
  return !opts.no_files && (wants(opts, "csv") || wants(opts, "json") || wants(opts, "md"));
}

// The writers --format asks for (rank 0); `written` gets the names of the files they write.
// Without the table, its footer alone still ends the run with the verdict on stdout.
std::unique_ptr<ResultSink> make_sinks(const RunOptions& opts, const std::string& dir,
                                       std::vector<std::string>& written) {
  auto fan = std::make_unique<FanoutSink>();
  fan->add_sink(wants(opts, "table") ? make_table_sink(std::cout) : make_footer_sink(std::cout));
  if (!writes_files(opts)) return fan;
  struct FileFormat {
    const char* format;
    const char* file;
    std::unique_ptr<ResultSink> (*make)(const std::string& path);
  };
  static const FileFormat kFileFormats[] = {
      {"csv", "results.csv", make_csv_sink}, {"json", "run.json", make_json_sink}, {"md", "results.md", make_markdown_sink}};
  for (const FileFormat& f : kFileFormats) {
    if (!wants(opts, f.format)) continue;
    fan->add_sink(f.make(dir + "/" + f.file));
    written.push_back(f.file);
  }
  return fan;
}

// What the sweep left: the exit code of this rank and, on rank 0, the rows.
struct SweepOutcome {
  ExitCode code = ExitCode::ok;
  std::vector<RunRecord> rows;
  bool measured_any = false;
  std::string stop_reason;
};

// Runs `body` with the watchdog's runner forgotten afterwards, also when it throws.
template <typename F>
SweepOutcome with_forget(std::atomic<Runner*>& active, F&& body) {
  struct Forget {
    std::atomic<Runner*>& runner;
    ~Forget() { runner = nullptr; }
  } forget{active};
  return body();
}

// The ordinary run: one Runner over every rank, rows streamed to the sink as they come.
SweepOutcome run_world(const RunOptions& opts, const SweepPlan& plan, const ImplContext& base, Backend& backend,
                       ResultSink* sink, Watchdog& watchdog, telemetry::Sampler& sampler, std::atomic<Runner*>& active) {
  return with_forget(active, [&] {
    Runner runner(opts, plan, base, backend, sink, watchdog);
    runner.set_telemetry(&sampler);
    active = &runner;
    SweepOutcome out;
    out.code = runner.run();
    out.rows = runner.rows();
    out.measured_any = runner.measured_any();
    out.stop_reason = runner.stop_reason();
    return out;
  });
}

// --groups: the sweep in sub-communicators (harness/groups.h); rows reach the sink round by round.
SweepOutcome run_groups(const std::vector<RankGroup>& groups, const std::vector<std::vector<size_t>>& rounds,
                        const RunOptions& opts, const SweepPlan& plan, const ImplContext& base, Backend& backend,
                        ResultSink* sink, Watchdog& watchdog, std::atomic<Runner*>& active) {
  GroupRunOutcome g = run_in_groups(groups, rounds, opts, plan, base, backend, sink, watchdog, active);
  return SweepOutcome{g.code, std::move(g.rows), g.measured_any, std::move(g.stop_reason)};
}

// After the footer: the implementations side by side with the table's figure, and where the
// files are.
void print_summary(const std::vector<RunRecord>& rows, const RunOptions& opts, const std::string& dir,
                   const std::vector<std::string>& written) {
  fmt::print("{}", straggler_report(rows, opts.straggler_threshold));
  fmt::print("{}", group_outlier_report(rows, opts.group_outlier_threshold));
  const std::string summary = comparison_table(rows, opts.baseline, false);
  if (!summary.empty()) fmt::print("#\n{}", summary);
  if (!written.empty()) {
    std::string list;
    for (const std::string& f : written) list += (list.empty() ? "" : ", ") + f;
    fmt::print("# results: {}/ ({})\n", dir, list);
  }
  std::fflush(stdout);
}

}  // namespace

int run_benchmark(const RunOptions& opts_in, int* argc, char*** argv) {
  RunOptions opts = opts_in;
  const int lrank = launcher_rank();
  std::string out_dir;
  // Before MPI: a bad fault spec, tuning variable or output folder is a usage error (exit 2).
  opts.fault = fault_from_environment();
  check_tuning_environment();
  check_outputs(opts);
  if (!opts.history_db.empty()) {  // a damaged store: exit 3 on every rank before measuring
    History::probe(opts.history_db);
    if (lrank == 0) History create(opts.history_db);
  }
  if (lrank == 0) prepare_json_file(opts.json_file);
  if (lrank == 0 && writes_files(opts)) out_dir = prepare_output_dir(opts.out_dir);
  // The efficiency column (harness/links/links.h): ceilings from a links.json, read before MPI.
  std::vector<LinkCeiling> ceilings;
  std::string ceilings_source = opts.ceilings_file;
  if (lrank == 0 && !opts.ceilings_file.empty()) ceilings = read_link_ceilings(opts.ceilings_file);
  // The model's columns (harness/model/run_model.h): a bad topology is a usage error on every rank.
  std::optional<RunModel> model;
  if (!opts.model_topology.empty()) model = load_run_model(opts.model_topology);

  TerminationSignals signals;  // first: before MPI, CUDA or the watchdog start threads
  std::unique_ptr<LockedSink> sink;
  std::atomic<Runner*> active_runner{nullptr};
  std::atomic<ProgressBoard*> board{nullptr};
  std::vector<std::string> host_of;  // set before `board`
  int rank = lrank;
  set_job_end_rank(lrank);  // until MPI says
  std::string host = "?";
  // What end_job() closes and aborts when the watchdog or a signal ends the run: rank 0's result
  // files (as incomplete) and the communicators of the implementations set up so far.
  set_job_end_hooks({[&](const RunOutcome& o, std::chrono::milliseconds wait) { return !sink || sink->try_finish(o, wait); },
                     [&] {
                       Runner* r = active_runner.load();
                       return r ? r->abort_implementations() : std::vector<std::string>{};
                     }});
  struct ForgetHooks {  // the hooks refer to this function's locals
    ~ForgetHooks() { set_job_end_hooks({}); }
  } forget_hooks;
  // Every phase from MPI start-up on has a deadline; on expiry the rank reports the phase and
  // ends the run with exit code 5.
  Watchdog watchdog(opts.timeout, [&](const std::string& phase, std::chrono::milliseconds waited) {
    std::string late;
    if (ProgressBoard* b = board.load()) late = b->describe_behind(host_of);
    JobEnd end;
    end.exit_code = static_cast<int>(ExitCode::timeout);
    end.message = fmt::format(
        "rank {} (host {}): timeout: '{}' has taken {:.1f} s (--timeout {:.0f} s); a rank or link is stuck; {}; "
        "ending the run with exit code 5",
        rank, host, phase, waited.count() / 1000.0, opts.timeout.count() / 1000.0,
        late.empty() ? "no rank of this node is behind" : "behind it on this node: " + late);
    end.reason = fmt::format("timeout in '{}' on rank {}{}", phase, rank, late.empty() ? "" : "; behind it: " + late);
    end.verdict = "FAILED: timeout";
    end.rank0_grace = rank0_grace_for_timeout(opts.timeout);
    end_job(end);
  });
  signals.set_handler([&](int sig) {
    const std::string phase = watchdog.phase();
    const std::string reason = fmt::format("rank {} (host {}) was terminated by {} during '{}'", rank, host,
                                           sigabbrev_np(sig) ? fmt::format("SIG{}", sigabbrev_np(sig)) : "a signal", phase.empty() ? "-" : phase);
    end_job({.exit_code = 128 + sig,
             .reason = reason,
             .verdict = "FAILED: terminated",
             .message = fmt::format("{}; ending the run with exit code {}", reason, 128 + sig)});
  });
  struct ForgetHandler {  // the handler refers to `watchdog` and `host`, which go before `signals`
    TerminationSignals& signals;
    ~ForgetHandler() { signals.set_handler({}); }
  } forget_handler{signals};
  watchdog.enter("MPI initialisation");
  mpi_start(argc, argv);
  MPI_Comm world = MPI_COMM_WORLD;
  CCB_MPI(MPI_Comm_rank(world, &rank));
  set_job_end_rank(rank);
  watchdog.enter("start-up: exchanging host names");
  RankLayout layout = discover_layout(world);
  host = layout.host();
  host_of = layout.host_of;
  watchdog.enter("start-up: creating the progress board");
  ProgressBoard progress(world);
  board = &progress;
  watchdog.set_board(&progress);

  ExitCode code = ExitCode::ok;
  bool in_step = false;  // every rank agreed on the exit code: collective clean-up is safe
  try {
    watchdog.enter("start-up: comparing builds and arguments");
    check_same_run(world, layout,
                   fmt::format("ccbench {} git {} args '{}'", CCBENCH_VERSION, CCBENCH_GIT_HASH, arguments_of(opts.command_line)));
    check_same_tuning(world, layout);
    if (opts.fault && opts.fault->rank >= layout.nranks)  // a fault that could never fire
      fail(ExitCode::usage, "CCBENCH_FAULT: rank={} does not exist in this run of {} ranks (valid: 0 to {})",
           opts.fault->rank, layout.nranks, layout.nranks - 1);
    layout.emulate_nodes(opts.emulate_nodes);
    ring_order(opts.ring_order, layout);  // validated before any work; the same verdict on every rank
    std::vector<RankGroup> groups;  // --groups other than world, and the rounds they run in
    std::vector<std::vector<size_t>> rounds;
    if (opts.groups != "world")
      agreed_step(world, "--groups", [&] {
        groups = make_groups(opts.groups, layout);
        rounds = group_rounds(groups, opts.serial || opts.groups == "pairs");
      });
    watchdog.enter("start-up: choosing devices");
    // Device: GPUs when every rank has one (auto), or what was asked for.
    std::string why_no_gpu;
    int gpus = gpu_count(&why_no_gpu);
    int min_gpus = static_cast<int>(min_over_ranks(world, static_cast<std::uint64_t>(gpus)));
    Device device = Device::cpu;
    set_ib_options(opts.ib);  // validated by the command line
    set_ofi_options(opts.ofi);
    if (opts.transport == "ofi")  // provider and domain names checked where libfabric runs, before any work
      agreed_step(world, "--transport ofi", [&] { (void)select_ofi(layout, 0); });
    std::optional<std::string> ib_unavailable = std::string("not probed on CPU ranks");
    if (opts.device == DeviceChoice::gpu || (opts.device == DeviceChoice::auto_detect && min_gpus > 0)) {
      agreed_step(world, "--device gpu", [&] {
        if (gpus == 0) fail(ExitCode::precondition, "host {} has no usable GPU: {}", layout.host(), why_no_gpu);
        if (layout.host_ranks() > gpus && !opts.share_gpus)
          fail(ExitCode::precondition,
               "host {} runs {} ranks but has {} GPUs: start one rank per GPU (mpirun -np), or pass --share-gpus",
               layout.host(), layout.host_ranks(), gpus);
      });
      device = Device::gpu;
      agreed_step(world, "--transport for GPU ranks", [&] { pin_nccl_path(opts.transport, layout); });
      if (opts.transport == "ofi")  // where the net FIFO slots live: GPU memory where the provider takes it
        agreed_step(world, "--transport ofi", [&] { prepare_ofi_gpu(layout, layout.host_local_rank() % std::max(gpus, 1)); });
      ib_unavailable = probe_gpu_ib(world, layout, opts.transport);
    }

    std::unique_ptr<Backend> backend;
    agreed_step(world, "device set-up", [&] {
      backend = device == Device::gpu ? make_gpu_backend(layout.host_local_rank() % std::max(gpus, 1)) : make_cpu_backend();
    });

    SweepPlan plan = plan_implementations(opts, device);
    if (plan.impls.empty()) {
      std::string reasons;
      for (const auto& [n, why] : plan.skipped) reasons += fmt::format("\n  {}: {}", n, why);
      fail(ExitCode::precondition, "no requested implementation can run here:{}", reasons);
    }

    // Sizes: the largest must fit the buffers of a rank (kBuffersPerRank).
    std::uint64_t avail = backend->available_memory();
    if (device == Device::cpu) avail /= static_cast<std::uint64_t>(std::max(1, layout.host_ranks()));
    avail = min_over_ranks(world, avail ? avail : UINT64_MAX);
    const std::uint64_t fit = avail == UINT64_MAX ? UINT64_MAX : avail / kMemoryHeadroom / kBuffersPerRank;
    if (!opts.max_given) {
      opts.sweep.max_bytes = device == Device::gpu ? kDefaultGpuMaxBytes : kDefaultCpuMaxBytes;
      opts.sweep.max_bytes = std::max(opts.sweep.min_bytes, opts.sweep.max_bytes);
    }
    if (opts.sweep.max_bytes > fit) {
      std::uint64_t capped = 1;
      while (capped * 2 <= fit) capped *= 2;
      if (capped < opts.sweep.min_bytes)
        fail(ExitCode::precondition, "-b {} does not fit in memory: each rank has about {} bytes free for {} buffers",
             format_size(opts.sweep.min_bytes), avail, kBuffersPerRank);
      if (rank == 0)
        fmt::print("# note: -e {} does not fit in memory (4 buffers of the largest size per rank, {:.1f} GB free): "
                   "capped at {}\n", format_size(opts.sweep.max_bytes), avail / 1e9, format_size(capped));
      opts.sweep.max_bytes = capped;
    }
    plan.sizes = sweep_sizes(opts.sweep);

    if (opts.baseline.empty()) opts.baseline = device == Device::gpu ? (opts.nccl_symmetric ? "nccl-symm" : "nccl") : "mpi";

    ImplContext base;
    base.comm = world;
    base.layout = &layout;
    base.device = device;
    base.transport = opts.transport;
    base.ib_unavailable = ib_unavailable;
    base.ring_order = opts.ring_order;
    base.tree = opts.tree;
    base.cuda_device = device == Device::gpu ? layout.host_local_rank() % std::max(gpus, 1) : -1;
    if (device == Device::gpu) {  // GPUs by bus id: which ranks share one, which can map each other
      layout.gpu_of = gather_gpu_ids(world, base.cuda_device);
      layout.gpu_peer_access = gather_gpu_peer_access(world, layout, base.cuda_device);
    }
    layout.numa_of = gather_numa_nodes(world, base.cuda_device);  // for --ring-order topo
    if (device == Device::gpu && opts.ring_order.kind == RingOrderKind::topo)  // NVLink neighbours
      layout.gpu_links = gather_gpu_links(world, layout, base.cuda_device);
    base.stream = backend_stream(*backend);
    // Our own waits give up a little before the watchdog, so that they can name the peer they
    // waited for; the watchdog catches what they cannot (MPI, NCCL).
    base.timeout = opts.timeout * 9 / 10;

    // Health telemetry: the first rank of each host samples it (telemetry/sampler.h).
    const bool samples_host = opts.telemetry.enabled && telemetry::samples_its_host(rank, layout.host_of);
    telemetry::Sources telemetry_sources;
    agreed_step(world, "telemetry set-up", [&] {
      const std::string& rec = opts.telemetry.record_path;  // one file per host: rank 0's as given
      if (samples_host) telemetry_sources = telemetry::open_sources(rec.empty() || rank == 0 ? rec : rec + "." + host);
    });
    telemetry::Sampler sampler(opts.telemetry, {samples_host, rank == 0, host}, std::move(telemetry_sources),
                               [world](const std::string& s) { return gather_strings(world, s); },
                               rank == 0 && writes_files(opts) ? out_dir + "/telemetry.jsonl" : "");

    Json context = build_context(opts, plan, layout, world, *backend);
    if (rank == 0) context["telemetry"] = sampler.context();
    watchdog.enter("start-up: describing the ranks");
    const std::string block = startup_block(world, layout, *backend, base.cuda_device, opts,
                                            progress_plan(opts, plan).per_cycle() * std::max(1, opts.cycles),
                                            results_written(opts, out_dir));
    std::vector<std::string> files_written;
    if (rank == 0) {
      fmt::print("{}", block);
      std::fflush(stdout);
      sink = std::make_unique<LockedSink>(
          with_json_file_and_progress(opts, plan, make_sinks(opts, out_dir, files_written)));
      if (sampler.writes_series()) files_written.push_back("telemetry.jsonl");
      sink->begin(context);
    }

    if (opts.measure_ceilings) {  // the efficiency column's ceilings, at the run's largest size
      watchdog.enter("measuring link ceilings (--measure-ceilings)");
      ceilings = measure_link_ceilings(device == Device::gpu, opts.transport, layout, world, base.cuda_device,
                                       base.timeout, std::clamp<std::uint64_t>(plan.sizes.back(), 1 << 20, 256 << 20),
                                       opts.no_files ? "" : out_dir + "/links.json");
      ceilings_source = "measured in this run (links.json)";
    }
    const SweepOutcome swept = opts.groups == "world"
                                   ? run_world(opts, plan, base, *backend, sink.get(), watchdog, sampler, active_runner)
                                   : with_forget(active_runner, [&] {
                                       return run_groups(groups, rounds, opts, plan, base, *backend, sink.get(), watchdog,
                                                         active_runner);
                                     });
    code = swept.code;
    sampler.finish();  // collective: the last samples, the run's health summary and checks
    if (sampler.fails_health()) {
      fmt::print(stderr, "ccbench: a health check failed (--fail-on-health): exit code 4\n");
      code = more_severe(code, ExitCode::threshold);
    }
    if (rank == 0 && opts.min_busbw_gbps > 0) {  // NCCL_TESTS_MIN_BW; agreed with the rest below
      MinBandwidthVerdict v = judge_min_bandwidth(swept.rows, opts.min_busbw_gbps);
      fmt::print("{}", v.report);
      code = more_severe(code, v.code);
    }
    if (!swept.measured_any && code == ExitCode::ok) {
      code = ExitCode::precondition;
      if (rank == 0) fmt::print(stderr, "ccbench: nothing could be measured: every case was skipped (see the reasons above)\n");
    }
    code = agree_exit_code(world, code);
    in_step = true;
    if (sink && !opts.accept_rules.empty()) {  // rank 0 holds the rows: its exit code carries the verdict
      ResultSet measured{"", swept.rows, {}, context};
      code = more_severe(code, report_acceptance(opts.accept_rules, {measured},
                                                 opts.no_files ? "" : out_dir + "/accept.xml", "run"));
    }
    if (sink) {
      RunOutcome outcome;
      outcome.complete = swept.stop_reason.empty();
      outcome.reason = swept.stop_reason;
      outcome.exit_code = static_cast<int>(code);
      outcome.verdict = code == ExitCode::ok ? "OK" : fmt::format("FAILED: {}", exit_code_name(code));
      outcome.health = sampler.summary();
      sink->finish(outcome);
      if (!ceilings.empty() && writes_files(opts) && wants(opts, "json"))
        add_efficiency_to_run_json(out_dir + "/run.json", ceilings, ceilings_source);
      if (model && writes_files(opts) && wants(opts, "json"))
        fmt::print("{}", add_model_to_run_json(out_dir + "/run.json", *model, ceilings));
      if (!opts.history_db.empty())
        code = more_severe(code, append_to_history(opts.history_db, context, swept.rows, outcome, out_dir));
      print_summary(swept.rows, opts, out_dir, files_written);
    }
  } catch (const Error& e) {
    watchdog.leave();
    code = e.code();
    if (rank == 0 || !(e.is_agreed() || e.code() == ExitCode::precondition))
      fmt::print(stderr, "ccbench: error: {}\n", e.what());
    if (sink) sink->finish({false, e.what(), static_cast<int>(code), fmt::format("FAILED: {}", exit_code_name(code))});
  }
  watchdog.enter("MPI finalisation");
  watchdog.set_board(nullptr);
  board = nullptr;
  // Collective: only where every rank got here the ordinary way; otherwise MPI_Finalize takes it.
  if (in_step) progress.free();
  mpi_stop();
  watchdog.leave();
  return static_cast<int>(code);
}

}  // namespace ccbench
