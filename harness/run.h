#pragma once
// `ccbench run`: one run of the benchmark as an object. Its members are declared in the order
// they come to exist and go in reverse; each stage is a method, called in this order:
//   prepare()  before MPI, what can be refused without it: the fault spec, tuning variables,
//              outputs, history store, -J file and results folder, the --ceilings file and the
//              --model topology (usage error, exit 2, or precondition, 3, before any MPI)
//   connect()  MPI start-up, the hosts of the ranks, the progress board
//   set_up()   what every rank agrees on (build, arguments, fault rank, ring order, groups), the
//              device and its backend, the implementations and sizes, the context, telemetry,
//              the start-up block and rank 0's result files
//   measure()  the link ceilings (--measure-ceilings), the files' first lines, then the sweep
//              (the whole world, or in groups)
//   judge()    health checks, NCCL_TESTS_MIN_BW, nothing measured: the exit code every rank
//              agrees on; then rank 0's acceptance rules
//   record()   rank 0: the result files closed with the outcome, the model's report, the
//              history, the summary after the table
//   finish()   MPI finalisation; the sampler and the device's backend go just before it
// The JobGuard (harness/job/job_guard.h) is the first member: in any stage a timeout or a
// termination signal ends the job through it, and rank 0's files say why.
//
// An error reaches every rank at once. What every rank finds alike (a bad fault rank, nothing to
// run) and what a step agrees on (agree_outcome: rank 0's result files opening, the devices) is an
// agreed Error: rank 0 says it once and every rank ends in order with its code. An error that only
// this rank has, while the others may be inside a collective call (a full disk while rows are
// written), ends the whole job at once: this rank says it, rank 0 closes its files with it, and
// MPI_Abort makes the launcher end every other rank, quietly, with that code. Once every rank
// agreed on the exit code, or threw one agreed error, the ranks end together once rank 0 has
// said and recorded it: rank 0's final code (acceptance rules, the history) is every rank's, and
// no rank exits (making the launcher end rank 0) before that.
//
// Rank 0 holds its results folder (harness/results_dir.h) from prepare() to the process's end:
// one writer per folder; a run that stops before it opens its files leaves no folder it made.
//
// Every row reaches rank 0's writers completed (harness/record_stream.h): its link ceiling and
// efficiency (ceilings read in prepare() or measured in measure(), before the sweep) and the
// model's prediction (the model loaded in prepare()).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "harness/engine/backend.h"
#include "harness/health/energy_meter.h"
#include "harness/groups/groups.h"
#include "harness/job/job_guard.h"
#include "harness/model/run_model.h"
#include "harness/engine/options.h"
#include "harness/overlap/overlap_job.h"
#include "harness/record_stream.h"
#include "harness/results_dir.h"
#include "harness/engine/runner.h"
#include "results/links.h"
#include "telemetry/sampler.h"
#include "topologies/layout.h"

namespace ccbench {

// The implementations to run on `device` (--impl: all, default or names), and the requested ones
// that cannot run here with why. Pure.
SweepPlan plan_implementations(const RunOptions& opts, Device device);

// What --measure-ceilings runs: harness/links/links.h's measure_link_ceilings, handed in by the
// command line (harness/app/run.cpp), because links/ sits above this engine and builds on it.
// Collective; the ceilings are complete on rank 0, which writes `links_json` unless it is empty.
using CeilingMeter = std::function<std::vector<LinkCeiling>(
    bool gpu, const std::string& transport, const RankLayout& layout, MPI_Comm comm, int cuda_device,
    std::chrono::milliseconds timeout, std::uint64_t bytes, const std::string& links_json)>;

class Run {
 public:
  // `measure_ceilings` may be empty where opts.measure_ceilings is false (prepare() refuses it otherwise).
  explicit Run(RunOptions opts, CeilingMeter measure_ceilings = {});
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // Every stage; returns this rank's exit code: the one all ranks agreed on, on rank 0 made more
  // severe by acceptance rules and the history. An Error from prepare() or connect() propagates
  // (MPI is then not running, or not in step); any later one ends the run with its code, the
  // files closed with it.
  int execute(int* argc, char*** argv);

  // The first stage, on its own for tests: no MPI, no device.
  void prepare();

  // Rank 0's results folder ("" when no file is written), and the ceilings and model prepare() read.
  const std::string& out_dir() const { return out_dir_; }
  const std::vector<LinkCeiling>& ceilings() const { return ceilings_; }
  const std::optional<RunModel>& model() const { return model_; }

 private:
  void connect(int* argc, char*** argv);
  void set_up();
  void agree_on_the_run();
  void choose_device();
  void size_the_sweep();
  void check_fault_fits() const;
  void fill_base_context();
  void start_telemetry();
  void open_results();
  void measure();
  void sweep();
  void measure_load_again();  // --overlap: alone after the rows, into their load_alone_end
  void judge();
  void record();
  void note_ignored_root();
  void note_oversubscription();
  void end_with_error(const Error& e);
  void finish();
  // A row's ceiling and model columns (the stream's completion).
  void complete(RunRecord& row) const;

  JobGuard guard_;  // first: its signal thread starts before any other; last: it outlives all it touches
  // Over ofi: an early end removes this process's shm regions (remove_ofi_shm_regions).
  std::optional<JobGuard::Attachment> ofi_regions_;
  RunOptions opts_;
  CeilingMeter measure_ceilings_;
  const int launcher_rank_;
  // prepare()
  ResultsFolder folder_;  // rank 0's, locked while the process lives
  std::string out_dir_;
  std::vector<LinkCeiling> ceilings_;  // rank 0; measured in measure() with --measure-ceilings
  std::string ceilings_source_;
  std::optional<RunModel> model_;
  // connect()
  MPI_Comm world_ = MPI_COMM_NULL;
  int rank_ = 0;
  RankLayout layout_;
  // set_up()
  std::vector<RankGroup> groups_;  // --groups other than world, and the rounds they run in
  std::vector<std::vector<std::size_t>> rounds_;
  std::string search_report_;  // --groups bisect (rank 0): the steps and the conclusion
  Json search_json_;           // and the same for run.json ("culprit_search")
  int gpus_ = 0;
  std::unique_ptr<Backend> backend_;
  SweepPlan plan_;
  ImplContext base_;
  std::unique_ptr<telemetry::Sampler> sampler_;
  std::unique_ptr<EnergyMeter> energy_;  // --energy (harness/health/energy_meter.h)
  JobLoad load_;                         // --overlap (harness/overlap/overlap_job.h)
  Json context_;
  std::vector<std::string> files_written_;  // rank 0, in the results folder
  std::string shared_gpu_;                  // rank 0: why GPU rows get no prediction (run_model.h)
  std::unique_ptr<RecordStream> stream_;    // rank 0: into the guard's writers
  // measure(), judge(), record()
  ExitCode code_ = ExitCode::ok;
  bool measured_any_ = false;
  std::string stop_reason_;
  bool in_step_ = false;  // every rank agreed on the exit code (or threw one agreed error): collective clean-up is safe
};

}  // namespace ccbench
