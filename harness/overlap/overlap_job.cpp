#include "harness/overlap/overlap_job.h"

#include <thread>

#include <fmt/format.h>

#include "core/checks.h"
#include "core/error.h"
#include "harness/job/bootstrap.h"

namespace ccbench {

namespace {

// Collective: the rate alone, per GPU. Every rank loads its GPU at once, as during the rows, and
// marks the same wall-clock window on an idle stream: nothing else runs in it.
double measure_alone(const JobLoad& j, MPI_Comm comm, const char* what) {
  agreed_step(comm, what, [&] { j.load->start(); });  // every load runs from here
  j.load->window_begin(nullptr);
  std::this_thread::sleep_for(kAloneWindow);
  j.load->window_end(nullptr);
  double mine = 0;
  agreed_step(comm, what, [&] { mine = j.load->stop(); });
  return j.per_gpu(comm, mine);
}

// Collective: the job's GPUs, each counted by the first rank that drives it.
int count_gpus(MPI_Comm comm, const RankLayout& layout) {
  int first = 1, gpus = 0;
  for (int r = 0; r < layout.rank; ++r)
    if (layout.same_gpu(r, layout.rank, 0)) first = 0;
  check_mpi(MPI_Allreduce(&first, &gpus, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce of the load's GPUs");
  return gpus;
}

}  // namespace

double JobLoad::per_gpu(MPI_Comm comm, double mine) const {
  double sum = 0;
  check_mpi(MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce of the load's rate");
  return gpus > 0 ? sum / gpus : 0;
}

Json JobLoad::context() const {
  return {{"load", load_label(spec)},
          {"unit", load_unit(spec)},
          {"room_sms", spec.room_sms},
          {"sms", sms},
          {"gpus", gpus},
          {"alone", alone},
          {"alone_end", alone_end ? Json(*alone_end) : Json(nullptr)}};
}

JobLoad open_job_load(const OverlapSpec& spec, Device device, MPI_Comm comm, const RankLayout& layout,
                      int cuda_device) {
  JobLoad j;
  j.spec = spec;
  if (spec.kind == LoadKind::none) return j;
  agreed_step(comm, "--overlap", [&] {
    if (device != Device::gpu)
      fail(ExitCode::precondition,
           "--overlap {} runs a load beside the collectives on GPU ranks, and these are CPU "
           "ranks: leave --overlap out, or run on GPU ranks",
           load_label(spec));
    j.load = make_gpu_load(spec, cuda_device);
  });
  j.gpus = count_gpus(comm, layout);
  const int mine = j.load->sms();
  check_mpi(MPI_Allreduce(&mine, &j.sms, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce of the GPUs' SMs");
  j.alone = measure_alone(j, comm, "--overlap: the load alone");
  if (layout.rank == 0)
    fmt::print(
        "# overlap: {} on every GPU rank beside the collectives' timed batches and iterations, at the lowest "
        "stream priority; {} of {} SMs left to the collectives (our kernels' grids capped to them; NCCL's: "
        "--nccl-config maxCTAs); alone {:.1f} {} per GPU (every rank of a GPU loading it)\n",
        load_label(spec), spec.room_sms, j.sms, j.alone, load_unit(spec));
  return j;
}

void measure_alone_again(JobLoad& job, MPI_Comm comm, int rank) {
  job.alone_end = measure_alone(job, comm, "--overlap: the load alone after the rows");
  if (rank == 0)
    fmt::print(
        "# overlap: alone after the rows {:.1f} {} per GPU, {:+.1f} % against {:.1f} before them (a warm GPU "
        "at its power cap: compare the rows' load_during with both)\n",
        *job.alone_end, load_unit(job.spec), job.alone > 0 ? 100.0 * (*job.alone_end / job.alone - 1) : 0.0, job.alone);
}

void LoadHook::label(RunRecord& row) const {
  row.load = load_label(job_.spec);
  row.load_unit = load_unit(job_.spec);
}

void LoadHook::end_timed(bool done) {
  const double rate = job_.load->stop();  // waits for the launches in flight, also after a failure
  if (done) during_ = rate;
}

void LoadHook::end_row(MPI_Comm comm, const std::string& /*where*/, RunRecord& row) {
  row.load_alone = job_.alone;
  row.load_during = job_.per_gpu(comm, during_);  // as alone: per GPU, its ranks summed
}

void LoadHook::graph_row(RunRecord& row) const {
  row.load = row.load_unit = "";
  row.load_alone.reset();
  row.load_during.reset();
}

}  // namespace ccbench
