#include "harness/run.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/build_config.h"
#include "core/checks.h"
#include "core/error.h"
#include "core/git_hash.h"
#if CCBENCH_HAVE_NCCL
#include "collectives/nccl/nccl_library.h"
#endif
#include "harness/verdict/acceptance.h"
#include "harness/groups/bisect_run.h"
#include "harness/engine/context.h"
#include "harness/health/health_hooks.h"
#include "harness/engine/fault.h"
#include "harness/job/bootstrap.h"
#include "harness/verdict/min_bandwidth.h"
#include "harness/reachability.h"
#include "harness/results_dir.h"
#include "harness/run_outputs.h"
#include "harness/engine/sizes.h"
#include "harness/engine/startup.h"
#include "results/history.h"
#include "results/metrics.h"
#include "results/stragglers.h"
#include "topologies/ring_order.h"
#include "transports/gpu/gpu_paths.h"
#include "transports/ib/ib_transport.h"
#include "core/transport_names.h"
#include "transports/nccl_path.h"
#include "transports/ofi/ofi_transport.h"

namespace ccbench {

namespace {

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

// Runs `step`, whose outcome depends only on what every rank has agreed on: what it throws, every
// rank throws alike, so it is an agreed error (said once, and no rank needs to be stopped).
template <typename F>
void alike_on_every_rank(F&& step) {
  try {
    step();
  } catch (const Error& e) {
    if (e.is_agreed()) throw;
    throw Error::agreed(e.code(), e.what());
  }
}

// What a run may write into its folder: an earlier run's files of these names are never
// replaced silently (harness/results_dir.h).
std::vector<std::string> run_files(const RunOptions& opts) {
  std::vector<std::string> files{"results.csv", "run.json", "results.md", "telemetry.jsonl", "accept.xml"};
  if (opts.measure_ceilings) files.push_back("links.json");
  return files;
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

// For an NCCL implementation skipped on CPU ranks: whether NCCL could have run here at all, so that
// a node meant to have GPUs says what it lacks ("" for other implementations, or where it loads).
std::string nccl_also(const std::string& impl, Device device) {
  const auto id = parse_impl_id(impl);
  if (!id || !is_nccl(*id) || device != Device::cpu) return "";
#if CCBENCH_HAVE_NCCL
  std::string why;
  return nccl_api(&why) ? "" : "; NCCL could not be loaded here either: " + why;
#else
  return "; this ccbench was built without NCCL";
#endif
}

// After the result files are closed: a failure here loses nothing of the run.
ExitCode append_to_history(const std::string& db, const Json& context, const std::vector<RunRecord>& rows,
                           const RunOutcome& outcome, const std::string& out_dir) {
  try {
    History history(db);
    const long long id = history.append(context, rows, outcome.verdict, outcome.exit_code);
    fmt::print("# history: run {} appended to {}\n", id, history.label());
    return ExitCode::ok;
  } catch (const Error& e) {
    fmt::print(stderr, "ccbench: error: {}; the run is not in the history{}\n", e.what(),
               out_dir.empty() ? "" : fmt::format(", its results are complete in {}/", out_dir));
    return e.code();
  }
}

// --metrics: the run as Prometheus metrics with its exit code and, under --accept, its verdicts;
// after the result files are closed, as the history.
ExitCode write_run_metrics(const std::string& path, const Json& context, const std::vector<RunRecord>& rows,
                           ExitCode code, const std::vector<Rule>& rules, const std::string& out_dir) {
  try {
    ResultSet run{"", rows, {}, context};
    run.exit_code = static_cast<int>(code);
    const std::optional<AcceptReport> verdicts =
        rules.empty() ? std::nullopt : std::optional<AcceptReport>(evaluate_rules(rules, {run}));
    write_metrics_file(path, metrics_text({run}, verdicts ? &*verdicts : nullptr));
    fmt::print("# metrics: {}\n", path);
    return ExitCode::ok;
  } catch (const Error& e) {
    fmt::print(stderr, "ccbench: error: {}; no metrics written{}\n", e.what(),
               out_dir.empty() ? "" : fmt::format(", the run's results are complete in {}/", out_dir));
    return e.code();
  }
}

}  // namespace

SweepPlan plan_implementations(const RunOptions& opts, Device device) {
  SweepPlan plan;
  plan.device = device;
  if (opts.impls.size() == 1 && opts.impls[0] == "all") {
    for (const ImplInfo& i : implementations())
      if (i.device == device && i.make) plan.impls.push_back(&i);
    return plan;
  }
  if (opts.impls.size() == 1 && opts.impls[0] == "default") {
    for (const ImplInfo& i : implementations()) {
      if (i.device != device || !i.by_default) continue;
      // -R 2: NCCL on symmetric windows in NCCL's place.
      const ImplInfo* pick =
          opts.nccl_symmetric && i.id == ImplId::nccl ? find_implementation(ImplId::nccl_symm, device) : &i;
      if (pick && pick->make) plan.impls.push_back(pick);
    }
    return plan;
  }
  for (const std::string& n : opts.impls) {
    const auto id = parse_impl_id(n);  // the command line checked the names
    const ImplInfo* i = id ? find_implementation(*id, device) : nullptr;
    if (!i) {
      Device other = device == Device::cpu ? Device::gpu : Device::cpu;
      plan.skipped.emplace_back(
          n, fmt::format("{} runs on {} ranks and this run uses {} ranks (--device)", n, name(other), name(device)));
    } else if (!i->make) {
      plan.skipped.emplace_back(n, i->missing);
    } else {
      plan.impls.push_back(i);
    }
  }
  return plan;
}

Run::Run(RunOptions opts, CeilingMeter measure_ceilings)
    : guard_(opts.timeout, launcher_rank()), opts_(std::move(opts)), measure_ceilings_(std::move(measure_ceilings)),
      launcher_rank_(launcher_rank()), rank_(launcher_rank_) {}

Run::~Run() = default;

int Run::execute(int* argc, char*** argv) {
  prepare();
  connect(argc, argv);
  try {
    set_up();
    measure();
    judge();
    record();
  } catch (const Error& e) {
    end_with_error(e);
  }
  finish();
  return static_cast<int>(code_);
}

// ---------------------------------------------------------------------------------------------
// Before MPI
// ---------------------------------------------------------------------------------------------

void Run::prepare() {
  // A bad fault spec, tuning variable or output folder is a usage error (exit 2).
  opts_.fault = fault_from_environment();
  check_tuning_environment();
  check_outputs(opts_);
  if (opts_.measure_ceilings && !measure_ceilings_)  // a caller's mistake, before any MPI
    throw Error(ExitCode::runtime, "--measure-ceilings: Run was made without a CeilingMeter (harness/run.h)");
  if (!opts_.history_db.empty()) {  // a damaged store: exit 3 on every rank before measuring
    History::probe(opts_.history_db);
    if (launcher_rank_ == 0) History create(opts_.history_db);
  }
  if (launcher_rank_ == 0) prepare_json_file(opts_.json_file);
  if (launcher_rank_ == 0 && writes_files(opts_)) {
    folder_ = prepare_output_dir({opts_.out_dir, run_files(opts_), opts_.overwrite, opts_.command_line});
    out_dir_ = folder_.path();
  }
  // The ceiling columns (results/links.h): from a links.json, read here on rank 0.
  ceilings_source_ = opts_.ceilings_file;
  if (launcher_rank_ == 0 && !opts_.ceilings_file.empty()) ceilings_ = read_link_ceilings(opts_.ceilings_file);
  // The model's columns (harness/model/run_model.h): a bad topology is a usage error on every rank.
  if (!opts_.model_topology.empty()) model_ = load_run_model(opts_.model_topology);
}

// ---------------------------------------------------------------------------------------------
// MPI start-up and set-up
// ---------------------------------------------------------------------------------------------

void Run::connect(int* argc, char*** argv) {
  // Every phase from MPI start-up on has a deadline; on expiry the guard ends the run (exit 5).
  Watchdog& watchdog = guard_.watchdog();
  watchdog.enter("MPI initialisation");
  mpi_start(argc, argv);
  world_ = MPI_COMM_WORLD;
  CCB_MPI(MPI_Comm_rank(world_, &rank_));
  guard_.identify(rank_, "?", {});
  watchdog.enter("start-up: exchanging host names");
  layout_ = discover_layout(world_);
  guard_.identify(rank_, layout_.host(), layout_.host_of);
  watchdog.enter("start-up: creating the progress board");
  guard_.open_board(world_);
  // Where the ranks span hosts, a timeout names the hosts that no longer answer (a cut link).
  watchdog.enter("start-up: listening for reachability probes");
  auto reachability = std::make_shared<Reachability>(world_, layout_, opts_.timeout);
  guard_.set_hosts_note([reachability](std::chrono::milliseconds budget) {
    const Reachability::Report r = reachability->describe(budget);
    return JobGuard::HostsNote{r.text, r.silent > 0};
  });
}

void Run::set_up() {
  agree_on_the_run();
  note_oversubscription();
  choose_device();
  size_the_sweep();
  fill_base_context();
  load_ = open_job_load(opts_.overlap, plan_.device, world_, layout_, base_.cuda_device);
  if (load_.load) base_.collective_sms = load_.spec.room_sms;  // our grids fit beside the load
  start_telemetry();
  open_results();
}

// The same build and arguments everywhere, and what depends on the layout alone: the same
// verdict on every rank before any work.
void Run::agree_on_the_run() {
  guard_.watchdog().enter("start-up: comparing builds and arguments");
  check_same_run(
      world_, layout_,
      fmt::format("ccbench {} git {} args '{}'", CCBENCH_VERSION, CCBENCH_GIT_HASH, arguments_of(opts_.command_line)));
  check_same_tuning(world_, layout_);
  if (opts_.fault && opts_.fault->rank >= layout_.nranks)  // a fault that could never fire
    throw Error::agreed(ExitCode::usage,
                        fmt::format("CCBENCH_FAULT: rank={} does not exist in this run of {} ranks (valid: 0 to {})",
                                    opts_.fault->rank, layout_.nranks, layout_.nranks - 1));
  alike_on_every_rank([&] {
    layout_.emulate_nodes(opts_.emulate_nodes);
    ring_order(opts_.ring_order, layout_);  // validated before any work
  });
  note_ignored_root();
  if (opts_.groups == "bisect")
    agreed_step(world_, "--groups bisect", [&] {
      if (layout_.nodes < 2)
        ccbench::fail(ExitCode::precondition,
                      "--groups bisect: the run has 1 node, and the culprit search halves nodes: "
                      "run on 2 or more (hosts, or --emulate-nodes N)");
    });
  else if (opts_.groups != "world")
    agreed_step(world_, "--groups", [&] {
      groups_ = make_groups(opts_.groups, layout_);
      rounds_ = opts_.groups == "pairs" ? pair_group_rounds(groups_, layout_, opts_.serial)
                                        : group_rounds(groups_, opts_.serial);
    });
}

// GPUs when every rank has one (auto), or what was asked for; the backend; the implementations.
void Run::choose_device() {
  guard_.watchdog().enter("start-up: choosing devices");
  std::string why_no_gpu;
  gpus_ = gpu_count(&why_no_gpu);
  const int min_gpus = static_cast<int>(min_over_ranks(world_, static_cast<std::uint64_t>(gpus_)));
  Device device = Device::cpu;
  set_ib_options(opts_.ib);  // validated by the command line
  set_ofi_options(opts_.ofi);
  const bool ofi = parse_transport(opts_.transport) == Transport::ofi;
  if (ofi) {  // provider and domain names checked where libfabric runs, before any work
    agreed_step(world_, "--transport ofi", [&] { (void)select_ofi(layout_, 0); });
    ofi_regions_.emplace(guard_.attach(remove_ofi_shm_regions));
  }
  base_.ib_unavailable = std::string("not probed on CPU ranks");
  if (opts_.device == DeviceChoice::gpu || (opts_.device == DeviceChoice::auto_detect && min_gpus > 0)) {
    agreed_step(world_, "--device gpu", [&] {
      if (gpus_ == 0)
        ccbench::fail(ExitCode::precondition, "host {} has no usable GPU: {}", layout_.host(), why_no_gpu);
      if (layout_.host_ranks() > gpus_ && !opts_.share_gpus)
        ccbench::fail(
            ExitCode::precondition,
            "host {} runs {} ranks but has {} GPUs: start one rank per GPU (mpirun -np), or pass --share-gpus",
            layout_.host(), layout_.host_ranks(), gpus_);
    });
    device = Device::gpu;
    agreed_step(world_, "--transport for GPU ranks", [&] { pin_nccl_path(opts_.transport, layout_); });
    if (ofi)  // where the net FIFO slots live: GPU memory where the provider takes it
      agreed_step(world_, "--transport ofi",
                  [&] { prepare_ofi_gpu(layout_, layout_.host_local_rank() % std::max(gpus_, 1)); });
    base_.ib_unavailable = probe_gpu_ib(world_, layout_, opts_.transport);
  }
  base_.device = device;
  if (device == Device::cpu && !opts_.gpu_only.empty())  // --device auto found CPU ranks (cpu was refused)
    opts_.notes.push_back(
        fmt::format("{} act{} on GPU ranks, and --device auto found CPU ranks (not every rank "
                    "has a usable GPU): {} nothing here",
                    fmt::join(opts_.gpu_only, ", "), opts_.gpu_only.size() == 1 ? "s" : "",
                    opts_.gpu_only.size() == 1 ? "it changes" : "they change"));
  base_.cuda_device = device == Device::gpu ? layout_.host_local_rank() % std::max(gpus_, 1) : -1;
  agreed_step(world_, "device set-up",
              [&] { backend_ = device == Device::gpu ? make_gpu_backend(base_.cuda_device) : make_cpu_backend(); });
  plan_ = with_nccl_configs(plan_implementations(opts_, device), opts_.nccl_configs);
  for (auto& [impl, why] : plan_.skipped) why += nccl_also(impl, device);
  if (plan_.impls.empty()) {  // the same on every rank: the device is agreed
    std::string reasons;
    for (const auto& [n, why] : plan_.skipped) reasons += fmt::format("\n  {}: {}", n, why);
    throw Error::agreed(ExitCode::precondition, fmt::format("no requested implementation can run here:{}", reasons));
  }
}

// The sizes: the largest must fit the buffers of a rank (kBuffersPerRank); the default -e and
// baseline of the device.
void Run::size_the_sweep() {
  const bool gpu = plan_.device == Device::gpu;
  std::uint64_t avail = backend_->available_memory();
  if (!gpu) avail /= static_cast<std::uint64_t>(std::max(1, layout_.host_ranks()));
  avail = min_over_ranks(world_, avail ? avail : UINT64_MAX);
  const std::uint64_t fit = avail == UINT64_MAX ? UINT64_MAX : avail / kMemoryHeadroom / kBuffersPerRank;
  SweepSpec& sweep = opts_.sweep;
  if (!opts_.max_given) sweep.max_bytes = std::max(sweep.min_bytes, gpu ? kDefaultGpuMaxBytes : kDefaultCpuMaxBytes);
  if (sweep.max_bytes > fit) {
    std::uint64_t capped = 1;
    while (capped * 2 <= fit) capped *= 2;
    if (capped < sweep.min_bytes)  // the memory is agreed (the least of every rank's)
      throw Error::agreed(ExitCode::precondition,
                          fmt::format("-b {} does not fit in memory: each rank has about {} bytes free for {} buffers",
                                      format_size(sweep.min_bytes), avail, kBuffersPerRank));
    if (rank_ == 0)
      fmt::print(
          "# note: -e {} does not fit in memory (4 buffers of the largest size per rank, {:.1f} GB free): "
          "capped at {}\n",
          format_size(sweep.max_bytes), avail / 1e9, format_size(capped));
    sweep.max_bytes = capped;
  }
  plan_.sizes = sweep_sizes(sweep);
  check_fault_fits();
  if (opts_.baseline.empty())
    opts_.baseline = name(gpu ? (opts_.nccl_symmetric ? ImplId::nccl_symm : ImplId::nccl) : ImplId::mpi);
}

// A CCBENCH_FAULT whose size or iteration this run never reaches would never fire: refused, alike
// on every rank (the sizes are agreed), rather than a test that passes without its fault.
void Run::check_fault_fits() const {
  if (!opts_.fault || opts_.fault->kind == FaultSpec::Kind::alloc) return;
  const FaultSpec& f = *opts_.fault;
  if (f.size && std::find(plan_.sizes.begin(), plan_.sizes.end(), *f.size) == plan_.sizes.end())
    throw Error::agreed(
        ExitCode::usage,
        fmt::format("CCBENCH_FAULT: size={} is not among the sizes of this sweep ({} to {}): it would "
                    "never fire",
                    format_size(*f.size), format_size(plan_.sizes.front()), format_size(plan_.sizes.back())));
  const bool per_iteration = f.kind != FaultSpec::Kind::slow && f.kind != FaultSpec::Kind::corrupt_send;
  if (per_iteration && f.iteration >= opts_.iterations)
    throw Error::agreed(ExitCode::usage,
                        fmt::format("CCBENCH_FAULT: iteration={} is beyond the {} timed iteration{} of a measurement "
                                    "(-n {}; valid: 0 to {}): it would never fire",
                                    f.iteration, opts_.iterations, opts_.iterations == 1 ? "" : "s", opts_.iterations,
                                    opts_.iterations - 1));
}

// What every implementation is set up with.
void Run::fill_base_context() {
  base_.comm = world_;
  base_.layout = &layout_;
  base_.transport = opts_.transport;
  base_.ring_order = opts_.ring_order;
  base_.tree = opts_.tree;
  if (plan_.device == Device::gpu) {  // GPUs by bus id: which ranks share one, which can map each other
    layout_.gpu_of = gather_gpu_ids(world_, base_.cuda_device);
    layout_.gpu_peer_access = gather_gpu_peer_access(world_, layout_, base_.cuda_device);
  }
  layout_.numa_of = gather_numa_nodes(world_, base_.cuda_device);                   // for --ring-order topo
  if (plan_.device == Device::gpu && opts_.ring_order.kind == RingOrderKind::topo)  // NVLink neighbours
    layout_.gpu_links = gather_gpu_links(world_, layout_, base_.cuda_device);
  base_.stream = backend_stream(*backend_);
  // Our own waits give up a little before the watchdog, so that they can name the peer they
  // waited for; the watchdog catches what they cannot (MPI, NCCL).
  base_.timeout = opts_.timeout * 9 / 10;
}

// Health telemetry: the first rank of each host samples it (telemetry/sampler.h).
void Run::start_telemetry() {
  const bool samples_host = opts_.telemetry.enabled && telemetry::samples_its_host(rank_, layout_.host_of);
  const std::string host = layout_.host();
  telemetry::Sources sources;
  agreed_step(world_, "telemetry set-up", [&] {
    const std::string& rec = opts_.telemetry.record_path;  // one file per host: rank 0's as given
    if (samples_host) sources = telemetry::open_sources(rec.empty() || rank_ == 0 ? rec : rec + "." + host);
  });
  MPI_Comm world = world_;
  sampler_ = std::make_unique<telemetry::Sampler>(
      opts_.telemetry, telemetry::Role{samples_host, rank_ == 0, host}, std::move(sources),
      [world](const std::string& s) { return gather_strings(world, s); },
      rank_ == 0 && writes_files(opts_) ? out_dir_ + "/telemetry.jsonl" : "");
  energy_ = std::make_unique<EnergyMeter>(opts_.telemetry.energy_window, world_, layout_, plan_.device,
                                          base_.cuda_device);  // collective; never throws
  if (opts_.groups != "world") energy_->refuse("--groups: energy is measured with --groups world only");
}

// The context block, the start-up block, and on rank 0 the result writers, held by the guard.
void Run::open_results() {
  context_ = build_context(opts_, plan_, layout_, world_, *backend_);
  if (rank_ == 0) context_["telemetry"] = sampler_->context();
  if (rank_ == 0) context_["energy"] = energy_->context();
  if (rank_ == 0 && load_.load) context_["overlap"] = load_.context();
  guard_.watchdog().enter("start-up: describing the ranks");
  const std::string block = startup_block(world_, layout_, *backend_, base_.cuda_device, opts_,
                                          progress_plan(opts_, plan_).per_cycle() * std::max(1, opts_.cycles),
                                          results_written(opts_, out_dir_));
  if (rank_ == 0) {
    fmt::print("{}{}", block, energy_->startup_line());
    std::fflush(stdout);
  }
  // Rank 0 alone opens the files; every rank learns whether it could (a file in the way).
  std::unique_ptr<ResultSink> sinks;
  agreed_step(world_, "the result files", [&] {
    if (rank_ == 0) sinks = make_run_sinks(opts_, plan_, out_dir_, files_written_);
  });
  if (rank_ != 0) return;
  GuardedSink& writers = guard_.open_results(std::move(sinks), context_);
  folder_.mark_used();
  if (sampler_->writes_series()) files_written_.push_back("telemetry.jsonl");
  shared_gpu_ = shared_gpu_reason(context_);
  stream_ = std::make_unique<RecordStream>(writers, [this](RunRecord& row) { complete(row); });
}

// ---------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------

void Run::measure() {
  if (opts_.measure_ceilings) {  // the ceiling columns' ceilings, at the run's largest size
    guard_.watchdog().enter("measuring link ceilings (--measure-ceilings)");
    ceilings_ = measure_ceilings_(plan_.device == Device::gpu, opts_.transport, layout_, world_, base_.cuda_device,
                                  base_.timeout, std::clamp<std::uint64_t>(plan_.sizes.back(), 1 << 20, 256 << 20),
                                  opts_.no_files ? "" : out_dir_ + "/links.json");
    ceilings_source_ = "measured in this run (links.json)";
  }
  agreed_step(world_, "the result files", [&] {  // what the rows are judged against is known: the files begin
    if (!stream_) return;
    if (!ceilings_.empty()) context_["link_ceilings"] = link_ceilings_context(ceilings_, ceilings_source_);
    if (model_) context_["model"] = model_context(*model_, !ceilings_.empty());
    stream_->begin(context_);
  });
  sweep();
}

// The rows' load ran on a GPU warming up to its power cap: the load alone again now, as warm as
// they left it, goes into every row with a load (the files revised) and run.json's context.
void Run::measure_load_again() {
  if (!stop_reason_.empty()) {  // agreed: every rank skips it
    if (rank_ == 0) fmt::print("# overlap: not measured alone again after the rows: the sweep stopped early\n");
    return;
  }
  guard_.watchdog().enter("--overlap: the load alone after the rows");
  measure_alone_again(load_, world_, rank_);
  guard_.watchdog().leave();
  if (!stream_) return;
  context_["overlap"] = load_.context();
  std::vector<RunRecord> rows = stream_->rows();
  for (RunRecord& r : rows)
    if (!r.load.empty()) r.load_alone_end = load_.alone_end;
  stream_->revise(rows);
}

void Run::complete(RunRecord& row) const {
  if (!ceilings_.empty()) set_ceiling_columns(row, ceilings_);
  if (model_) set_model_columns(row, *model_, ceilings_, shared_gpu_);
}

// One Runner over every rank, or one per group (harness/groups/groups.h); rank 0's rows go into the
// stream as they come.
void Run::sweep() {
  if (opts_.groups == "world") {
    // The features beside the sweep, in the order their columns were always filled in.
    std::optional<HealthHook> health;
    std::optional<LoadHook> load;
    std::optional<EnergyHook> energy;
    std::vector<RunnerHook*> hooks;
    if (sampler_) hooks.push_back(&health.emplace(*sampler_));
    if (load_.load) hooks.push_back(&load.emplace(load_));
    if (energy_ && energy_->active()) hooks.push_back(&energy.emplace(*energy_, opts_.timeout));
    Runner runner(opts_, plan_, base_, *backend_, stream_.get(), guard_, std::move(hooks));
    code_ = runner.run();
    if (!runner.ring_neighbours().empty()) context_["ring_neighbours"] = runner.ring_neighbours();
    measured_any_ = runner.measured_any();
    stop_reason_ = runner.stop_reason();
    if (load_.load) measure_load_again();
    return;
  }
  if (opts_.groups == "bisect") {
    BisectOutcome b = run_bisection(opts_, plan_, base_, *backend_, stream_.get(), guard_);
    code_ = b.run.code;
    measured_any_ = b.run.measured_any;
    stop_reason_ = b.run.stop_reason;
    search_report_ = std::move(b.report);
    search_json_ = std::move(b.json);
    return;
  }
  const GroupRunOutcome g = run_in_groups(groups_, rounds_, opts_, plan_, base_, *backend_, stream_.get(), guard_);
  code_ = g.code;
  measured_any_ = g.measured_any;
  stop_reason_ = g.stop_reason;
}

// ---------------------------------------------------------------------------------------------
// The verdict and the records
// ---------------------------------------------------------------------------------------------

void Run::judge() {
  sampler_->finish();  // collective: the last samples, the run's health summary and checks
  if (sampler_->fails_health()) {
    fmt::print(stderr, "ccbench: a health check failed (--fail-on-health): exit code 4\n");
    code_ = more_severe(code_, ExitCode::threshold);
  }
  if (stream_ && opts_.min_busbw_gbps > 0) {  // NCCL_TESTS_MIN_BW; agreed with the rest below
    const MinBandwidthVerdict v = judge_min_bandwidth(stream_->rows(), opts_.min_busbw_gbps);
    fmt::print("{}", v.report);
    code_ = more_severe(code_, v.code);
  }
  if (!measured_any_ && code_ == ExitCode::ok) {
    code_ = ExitCode::precondition;
    if (rank_ == 0)
      fmt::print(stderr, "ccbench: nothing could be measured: every case was skipped (see the reasons above)\n");
  }
  code_ = agree_exit_code(world_, code_);
  in_step_ = true;
  if (stream_ && !opts_.accept_rules.empty()) {  // rank 0 holds the rows: its exit code carries the verdict
    const ResultSet measured{"", stream_->rows(), {}, context_};
    code_ = more_severe(code_, report_acceptance(opts_.accept_rules, {measured},
                                                 opts_.no_files ? "" : out_dir_ + "/accept.xml", "run"));
  }
}

void Run::record() {
  if (!stream_) return;
  RunOutcome outcome;
  outcome.complete = stop_reason_.empty();
  outcome.reason = stop_reason_;
  outcome.exit_code = static_cast<int>(code_);
  outcome.verdict = code_ == ExitCode::ok ? "OK" : fmt::format("FAILED: {}", exit_code_name(code_));
  outcome.health = sampler_->summary();
  outcome.context_added = Json::object();
  for (const char* key : {"ring_neighbours", "overlap"})  // known only once the rows are measured
    if (context_.contains(key)) outcome.context_added[key] = context_[key];
  if (Json pairs = pair_attribution_json(stream_->rows(), opts_.group_outlier_threshold); !pairs.is_null())
    outcome.context_added["pair_attribution"] = std::move(pairs);
  if (!search_json_.is_null()) outcome.context_added["culprit_search"] = search_json_;
  stream_->finish(outcome);
  if (model_) fmt::print("{}", model_report(*model_, stream_->rows()));
  fmt::print("{}", search_report_);
  if (!opts_.history_db.empty())
    code_ = more_severe(code_, append_to_history(opts_.history_db, context_, stream_->rows(), outcome, out_dir_));
  if (!opts_.metrics_file.empty())
    code_ = more_severe(
        code_, write_run_metrics(opts_.metrics_file, context_, stream_->rows(), code_, opts_.accept_rules, out_dir_));
  print_summary(stream_->rows(), opts_, out_dir_, files_written_);
}

// Ranks outnumbering the hardware threads they may run on: said once, at start-up and in run.json
// (context.oversubscribed), and the straggler and group-outlier lines become one note each.
void Run::note_oversubscription() {
  guard_.watchdog().enter("start-up: comparing ranks with hardware threads");
  opts_.oversubscribed = gather_oversubscription(world_, layout_);
  if (!opts_.oversubscribed.empty())
    opts_.notes.push_back(
        fmt::format("oversubscribed: {}: the times follow the scheduler rather than the hardware, "
                    "and a rank waiting for a thread looks like a straggler; for performance figures "
                    "run at most one rank per hardware thread",
                    opts_.oversubscribed));
}

// With -r naming no rank, the rows of rooted collectives are skipped with the reason; a run of
// none of them says that -r changes nothing rather than nothing at all.
void Run::note_ignored_root() {
  if (opts_.root < layout_.nranks) return;
  std::vector<std::string> measured;
  for (Collective c : opts_.collectives) {
    if (has_root(c)) return;
    measured.emplace_back(name(c));
  }
  opts_.notes.push_back(
      fmt::format("-r {} names no rank of this run (valid: 0 to {}), and no collective measured "
                  "here ({}) takes a root: it changes nothing",
                  opts_.root, layout_.nranks - 1, fmt::join(measured, ", ")));
}

void Run::end_with_error(const Error& e) {
  guard_.watchdog().leave();
  code_ = e.code();
  in_step_ = in_step_ || e.is_agreed();  // every rank threw it at the same point
  const std::string verdict = fmt::format("FAILED: {}", exit_code_name(code_));
  if (!in_step_ && !e.is_agreed()) {  // only this rank knows, and the others may be in a collective call
    const std::string who = rank_ == 0 ? "" : fmt::format("rank {} (host {}): ", rank_, layout_.host());
    JobEnd end;
    end.exit_code = static_cast<int>(code_);
    end.reason = who + e.what();
    end.verdict = verdict;
    end.message = fmt::format("error: {}{}", who, e.what());
    end.abort_mpi = true;
    guard_.end_job(end);
  }
  if (rank_ == 0 || !e.is_agreed()) fmt::print(stderr, "ccbench: error: {}\n", e.what());
  if (!stream_) return;
  try {
    stream_->finish({false, e.what(), static_cast<int>(code_), verdict});
  } catch (const Error& closing) {  // the files' own error (a full disk), after the one that ended the run
    fmt::print(stderr, "ccbench: error: {}\n", closing.what());
    code_ = more_severe(code_, closing.code());
  }
}

void Run::finish() {
  folder_.remove_if_unused();  // before the other ranks may exit: the launcher then ends rank 0
  if (in_step_) {              // every rank ends with rank 0's final code, once rank 0 has said and recorded it
    guard_.watchdog().enter("agreeing on the final exit code");
    int code = static_cast<int>(code_);
    if (MPI_Bcast(&code, 1, MPI_INT, 0, world_) == MPI_SUCCESS) code_ = static_cast<ExitCode>(code);
  }
  guard_.settle(static_cast<int>(code_));
  guard_.watchdog().enter("MPI finalisation");
  // Collective only where every rank got here the ordinary way; otherwise MPI_Finalize takes it.
  guard_.close_board(in_step_);
  // What came to exist after MPI and holds the device goes before it, last first: the sampler's
  // threads, then the backend (its stream and buffers, which a CUDA-aware MPI may have registered).
  sampler_.reset();
  load_ = {};
  energy_.reset();
  backend_.reset();
  mpi_stop();
  guard_.watchdog().leave();
}

}  // namespace ccbench
