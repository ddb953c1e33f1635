#include "harness/app.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <future>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "ccbench/build_info.h"
#include "harness/backend.h"
#include "harness/bootstrap.h"
#include "harness/context.h"
#include "harness/progress_board.h"
#include "harness/runner.h"
#include "harness/termination.h"
#include "harness/watchdog.h"
#include "results/compare.h"
#include "results/csv_reader.h"
#include "results/error.h"
#include "results/sink.h"
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
  auto before = read_results_csv(req.before);
  auto after = read_results_csv(req.after);
  CompareResult r = compare_runs(before, after, req.tolerance);
  fmt::print("{}", r.text);
  return r.regressions ? static_cast<int>(ExitCode::threshold) : 0;
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

std::string default_results_dir() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  return fmt::format("ccbench-results/{}-{}", stamp, host);
}

// Creates the results folder and proves it writable; throws Error(usage) naming the path.
std::string prepare_output_dir(const std::string& requested) {
  std::string dir = requested.empty() ? default_results_dir() : requested;
  if (requested.empty()) {  // a new folder: never mix two runs started in the same second
    std::string base = dir;
    for (int i = 2; std::filesystem::exists(dir); ++i) dir = fmt::format("{}-{}", base, i);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail(ExitCode::usage, "--out: cannot create the results folder '{}': {}", dir, ec.message());
  if (!std::filesystem::is_directory(dir)) fail(ExitCode::usage, "--out: '{}' exists and is not a folder", dir);
  std::string probe = dir + "/.ccbench-write-test";
  FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) fail(ExitCode::usage, "--out: the results folder '{}' is not writable: {}", dir, std::strerror(errno));
  std::fclose(f);
  std::remove(probe.c_str());
  return dir;
}

// The arguments of a command line without the program path (which may differ between nodes).
std::string arguments_of(const std::string& command_line) {
  auto space = command_line.find(' ');
  return space == std::string::npos ? "" : command_line.substr(space + 1);
}

// Runs `step` on every rank; if it failed anywhere, every rank throws the agreed error.
template <typename F>
void agreed_step(MPI_Comm comm, const char* what, F&& step) {
  const Outcome agreed = agree_outcome(comm, run_catching(std::forward<F>(step)));
  if (agreed.code != ExitCode::ok) throw Error(agreed.code, fmt::format("{}: {}", what, agreed.message));
}

std::uint64_t min_over_ranks(MPI_Comm comm, std::uint64_t v) {
  std::uint64_t out = v;
  mpi_check(MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_MIN, comm), "MPI_Allreduce");
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
    const std::vector<std::string> names = device == Device::gpu ? std::vector<std::string>{"nccl", "ring", "tree", "best"}
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

}  // namespace

int run_benchmark(const RunOptions& opts_in, int* argc, char*** argv) {
  RunOptions opts = opts_in;
  const int lrank = launcher_rank();
  std::string out_dir;
  // Before MPI: a bad fault spec, tuning variable or output folder is a usage error (exit 2).
  opts.fault = fault_from_environment();
  check_tuning_environment();
  if (lrank == 0 && !opts.no_files) out_dir = prepare_output_dir(opts.out_dir);

  TerminationSignals signals;  // first: before MPI, CUDA or the watchdog start threads
  std::unique_ptr<LockedSink> sink;
  std::atomic<Runner*> active_runner{nullptr};
  std::atomic<ProgressBoard*> board{nullptr};
  std::vector<std::string> host_of;  // set before `board`
  int rank = lrank;
  std::string host = "?";
  // Ends the run from another thread (watchdog, signals): rank 0 closes the result files as
  // incomplete, NCCL communicators are aborted, the process exits with `code`.
  auto end_run = [&](const std::string& reason, int code, const std::string& verdict) {
    if (sink) sink->try_finish({false, reason, code, verdict}, std::chrono::seconds(2));
    if (Runner* r = active_runner.load()) {
      // ncclCommAbort may wait for the device itself: 2 s in a thread of its own, then end anyway.
      std::packaged_task<std::vector<std::string>()> task([r] { return r->abort_implementations(); });
      auto done = task.get_future();
      std::thread(std::move(task)).detach();
      if (done.wait_for(std::chrono::seconds(2)) == std::future_status::ready) {
        for (const std::string& what : done.get()) fmt::print(stderr, "ccbench: rank {}: {}\n", rank, what);
      } else {
        fmt::print(stderr, "ccbench: rank {}: aborting the communicators took over 2 s; ending without\n", rank);
      }
    }
    std::fflush(nullptr);
    _exit(code);
  };
  // Every phase from MPI start-up on has a deadline; on expiry the rank reports the phase and
  // ends the run with exit code 5.
  Watchdog watchdog(opts.timeout, [&](const std::string& phase, std::chrono::milliseconds waited) {
    std::string late;
    if (ProgressBoard* b = board.load()) late = b->describe_behind(host_of);
    fmt::print(stderr,
               "ccbench: rank {} (host {}): timeout: '{}' has taken {:.1f} s (--timeout {:.0f} s); a rank or link "
               "is stuck; {}; ending the run with exit code 5\n",
               rank, host, phase, waited.count() / 1000.0, opts.timeout.count() / 1000.0,
               late.empty() ? "no rank of this node is behind" : "behind it on this node: " + late);
    end_run(fmt::format("timeout in '{}' on rank {}{}", phase, rank, late.empty() ? "" : "; behind it: " + late),
            static_cast<int>(ExitCode::timeout), "FAILED: timeout");
  });
  signals.set_handler([&](int sig) {
    const std::string phase = watchdog.phase();
    const std::string reason = fmt::format("rank {} (host {}) was terminated by {} during '{}'", rank, host,
                                           sigabbrev_np(sig) ? fmt::format("SIG{}", sigabbrev_np(sig)) : "a signal", phase.empty() ? "-" : phase);
    fmt::print(stderr, "ccbench: {}; ending the run with exit code {}\n", reason, 128 + sig);
    end_run(reason, 128 + sig, "FAILED: terminated");
  });
  watchdog.enter("MPI initialisation");
  mpi_start(argc, argv);
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_Comm_rank(world, &rank);
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
    if (opts.fault && opts.fault->rank >= layout.nranks)  // a fault that could never fire
      fail(ExitCode::usage, "CCBENCH_FAULT: rank={} does not exist in this run of {} ranks (valid: 0 to {})",
           opts.fault->rank, layout.nranks, layout.nranks - 1);
    watchdog.enter("start-up: choosing devices");
    // Device: GPUs when every rank has one (auto), or what was asked for.
    std::string why_no_gpu;
    int gpus = gpu_count(&why_no_gpu);
    int min_gpus = static_cast<int>(min_over_ranks(world, static_cast<std::uint64_t>(gpus)));
    Device device = Device::cpu;
    if (opts.device == DeviceChoice::gpu || (opts.device == DeviceChoice::auto_detect && min_gpus > 0)) {
      agreed_step(world, "--device gpu", [&] {
        if (gpus == 0) fail(ExitCode::precondition, "host {} has no usable GPU: {}", layout.host(), why_no_gpu);
        if (layout.local_ranks() > gpus && !opts.share_gpus)
          fail(ExitCode::precondition,
               "host {} runs {} ranks but has {} GPUs: start one rank per GPU (mpirun -np), or pass --share-gpus",
               layout.host(), layout.local_ranks(), gpus);
      });
      device = Device::gpu;
    }

    std::unique_ptr<Backend> backend;
    agreed_step(world, "device set-up", [&] {
      backend = device == Device::gpu ? make_gpu_backend(layout.local_rank() % std::max(gpus, 1)) : make_cpu_backend();
    });

    SweepPlan plan = plan_implementations(opts, device);
    if (plan.impls.empty()) {
      std::string reasons;
      for (const auto& [n, why] : plan.skipped) reasons += fmt::format("\n  {}: {}", n, why);
      fail(ExitCode::precondition, "no requested implementation can run here:{}", reasons);
    }

    // Sizes: the largest must fit four buffers (send, receive, expected, pristine input) per rank.
    std::uint64_t avail = backend->available_memory();
    if (device == Device::cpu) avail /= static_cast<std::uint64_t>(std::max(1, layout.local_ranks()));
    avail = min_over_ranks(world, avail ? avail : UINT64_MAX);
    const std::uint64_t fit = avail == UINT64_MAX ? UINT64_MAX : avail / 2 / 4;
    if (!opts.max_given) {
      opts.sweep.max_bytes = device == Device::gpu ? (1ull << 30) : (64ull << 20);
      opts.sweep.max_bytes = std::max(opts.sweep.min_bytes, opts.sweep.max_bytes);
    }
    if (opts.sweep.max_bytes > fit) {
      std::uint64_t capped = 1;
      while (capped * 2 <= fit) capped *= 2;
      if (capped < opts.sweep.min_bytes)
        fail(ExitCode::precondition, "-b {} does not fit in memory: each rank has about {} bytes free for 4 buffers",
             format_size(opts.sweep.min_bytes), avail);
      if (rank == 0)
        fmt::print("# note: -e {} does not fit in memory (4 buffers of the largest size per rank, {:.1f} GB free): "
                   "capped at {}\n", format_size(opts.sweep.max_bytes), avail / 1e9, format_size(capped));
      opts.sweep.max_bytes = capped;
    }
    plan.sizes = sweep_sizes(opts.sweep);

    if (opts.baseline.empty()) opts.baseline = device == Device::gpu ? "nccl" : "mpi";

    ImplContext base;
    base.comm = world;
    base.layout = &layout;
    base.device = device;
    base.transport = opts.transport;
    base.cuda_device = device == Device::gpu ? layout.local_rank() % std::max(gpus, 1) : -1;
    base.stream = backend_stream(*backend);
    // Our own waits give up a little before the watchdog, so that they can name the peer they
    // waited for; the watchdog catches what they cannot (MPI, NCCL).
    base.timeout = opts.timeout * 9 / 10;
    base.max_bytes = plan.sizes.back();

    Json context = build_context(opts, plan, layout, world, *backend);
    if (rank == 0) {
      auto fan = std::make_unique<FanoutSink>();
      auto wants = [&](const char* f) { return std::find(opts.formats.begin(), opts.formats.end(), f) != opts.formats.end(); };
      if (wants("table")) fan->add_sink(make_table_sink(std::cout));
      if (!opts.no_files) {
        if (wants("csv")) fan->add_sink(make_csv_sink(out_dir + "/results.csv"));
        if (wants("json")) fan->add_sink(make_json_sink(out_dir + "/run.json"));
        if (wants("md")) fan->add_sink(make_markdown_sink(out_dir + "/results.md"));
      }
      sink = std::make_unique<LockedSink>(std::move(fan));
      sink->begin(context);
    }

    Runner runner(opts, plan, base, *backend, sink.get(), watchdog);
    active_runner = &runner;
    struct Forget {  // before `runner` goes, also when run() throws
      std::atomic<Runner*>& runner;
      ~Forget() { runner = nullptr; }
    } forget{active_runner};
    code = runner.run();
    if (!runner.measured_any() && code == ExitCode::ok) {
      code = ExitCode::precondition;
      if (rank == 0) fmt::print(stderr, "ccbench: nothing could be measured: every case was skipped (see the reasons above)\n");
    }
    code = agree_exit_code(world, code);
    in_step = true;
    if (sink) {
      RunOutcome outcome;
      outcome.complete = runner.stop_reason().empty();
      outcome.reason = runner.stop_reason();
      outcome.exit_code = static_cast<int>(code);
      outcome.verdict = code == ExitCode::ok ? "OK" : fmt::format("FAILED: {}", exit_code_name(code));
      sink->finish(outcome);
      std::string summary = comparison_table(runner.rows(), opts.baseline, true);
      if (!summary.empty()) fmt::print("#\n# busbw from the median iteration, and its ratio to {}:\n{}", opts.baseline, summary);
      if (!opts.no_files) fmt::print("# results: {}/ (results.csv, run.json, results.md)\n", out_dir);
      std::fflush(stdout);
    }
  } catch (const Error& e) {
    watchdog.leave();
    code = e.code();
    if (rank == 0 || e.code() != ExitCode::precondition) fmt::print(stderr, "ccbench: error: {}\n", e.what());
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
