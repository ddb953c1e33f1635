#include "harness/overlap_job.h"

#include <fmt/format.h>

#include "core/checks.h"
#include "core/error.h"
#include "harness/job/bootstrap.h"

namespace ccbench {

double mean_over_ranks(MPI_Comm comm, double mine) {
  double sum = 0;
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  check_mpi(MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce of the load's rate");
  return sum / ranks;
}

JobLoad open_job_load(const OverlapSpec& spec, Device device, MPI_Comm comm, const RankLayout& layout, int cuda_device) {
  JobLoad j;
  j.spec = spec;
  if (spec.kind == LoadKind::none) return j;
  agreed_step(comm, "--overlap", [&] {
    if (device != Device::gpu)
      fail(ExitCode::precondition, "--overlap {} runs a load beside the collectives on GPU ranks, and these are CPU "
           "ranks: leave --overlap out, or run on GPU ranks", load_label(spec));
    j.load = make_gpu_load(spec, cuda_device);
  });
  // Ranks of one GPU take turns (one's load alone is not another's); different GPUs at once.
  int turn = 0, turns = 0;
  for (int r = 0; r < layout.rank; ++r) turn += layout.same_gpu(r, layout.rank, 0);
  check_mpi(MPI_Allreduce(&turn, &turns, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce of the load's turns");
  double alone = 0;
  for (int t = 0; t <= turns; ++t) {
    agreed_step(comm, "--overlap: the load alone", [&] {
      if (t == turn) alone = j.load->measure_alone();
    });
  }
  j.alone = mean_over_ranks(comm, alone);
  if (layout.rank == 0)
    fmt::print("# overlap: {} on every GPU rank beside the collectives' timed batches and iterations, alone {:.1f} {} "
               "(mean over the ranks)\n", load_label(spec), j.alone, load_unit(spec));
  return j;
}

}  // namespace ccbench
