#pragma once
// The job's --overlap load (harness/overlap/overlap.h): every GPU rank's load, opened and measured alone
// as one step of the run, and measured alone again after the rows.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <mpi.h>

#include "collectives/implementation.h"
#include "harness/overlap/overlap.h"
#include "harness/engine/runner_hook.h"
#include "results/record.h"
#include "topologies/layout.h"

namespace ccbench {

// How long the rate alone is measured: long enough for the clocks to settle under the load and
// for many launches of the largest default GEMM (~1.3 ms), short at start-up.
inline constexpr std::chrono::milliseconds kAloneWindow{500};

struct JobLoad {
  OverlapSpec spec;
  std::unique_ptr<OverlapLoad> load;  // null: no --overlap
  int gpus = 0;                       // GPUs of the job (ranks sharing one count it once)
  int sms = 0;                        // the fewest SMs of any rank's GPU
  double alone = 0;                   // per GPU (per_gpu), before the rows, in load_unit(spec)
  std::optional<double> alone_end;    // the same after the rows (measure_alone_again)
  // Collective: `mine` summed over the ranks sharing each GPU, the mean over the GPUs.
  double per_gpu(MPI_Comm comm, double mine) const;
  // run.json's "overlap" block: load, unit, room and SMs, alone before and after the rows.
  Json context() const;
};

// Collective over `comm`, every rank agreeing on the outcome: nothing for no load; on CPU ranks
// Error(precondition) saying why; else every rank's load, measured alone with every rank of a GPU
// loading it at once, and "# overlap: ..." printed by rank 0.
JobLoad open_job_load(const OverlapSpec& spec, Device device, MPI_Comm comm, const RankLayout& layout, int cuda_device);

// Collective: the rate alone again (alone_end), on a GPU as warm as the rows left it; rank 0
// prints it beside the first.
void measure_alone_again(JobLoad& job, MPI_Comm comm, int rank);

// The load beside the sweep (harness/engine/runner_hook.h): started before every row's timed batch and
// stopped after its single iterations (not the energy window or the CUDA-graph replays), its rate
// taken over the timed batch. Every row is labelled with the load; a measured row gets the rates
// alone and during (per GPU, collective in end_row), its CUDA-graph row neither (the replays run
// after the load stopped). `job` has a load and outlives the hook.
class LoadHook : public RunnerHook {
 public:
  explicit LoadHook(JobLoad& job) : job_(job) {}
  void label(RunRecord& row) const override;
  void begin_row() override { during_ = 0; }
  void begin_timed() override { job_.load->start(); }
  void begin_batch(void* stream) override { job_.load->window_begin(stream); }
  void end_batch(void* stream) override { job_.load->window_end(stream); }
  void end_timed(bool done) override;
  void end_row(MPI_Comm comm, const std::string& where, RunRecord& row) override;
  void graph_row(RunRecord& row) const override;

 private:
  JobLoad& job_;
  double during_ = 0;  // this rank's rate during the current row's timed batch
};

}  // namespace ccbench
