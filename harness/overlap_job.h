#pragma once
// The job's --overlap load (harness/overlap.h): every GPU rank's load, opened and measured alone
// as one step of the run.
#include <memory>
#include <string>

#include <mpi.h>

#include "collectives/implementation.h"
#include "harness/overlap.h"
#include "topologies/layout.h"

namespace ccbench {

struct JobLoad {
  OverlapSpec spec;
  std::unique_ptr<OverlapLoad> load;  // null: no --overlap
  double alone = 0;                   // the rate alone, mean over the ranks (load_unit(spec))
};

// Collective over `comm`, every rank agreeing on the outcome: nothing for no load; on CPU ranks
// Error(precondition) saying why; else every rank's load, measured alone with the ranks of one
// GPU taking turns (GPUs side by side), and "# overlap: ..." printed by rank 0.
JobLoad open_job_load(const OverlapSpec& spec, Device device, MPI_Comm comm, const RankLayout& layout, int cuda_device);

// Collective: the mean over the ranks of `mine`.
double mean_over_ranks(MPI_Comm comm, double mine);

}  // namespace ccbench
