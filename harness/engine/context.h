#pragma once
// The context block at the top of every output (docs/design.md, "Run records"): what ran, where,
// with which software and settings.
#include <mpi.h>

#include "harness/engine/backend.h"
#include "harness/engine/options.h"
#include "harness/engine/runner.h"
#include "results/record.h"
#include "topologies/layout.h"

namespace ccbench {

// Collective over `comm` (gathers every rank's device description); meaningful on rank 0.
Json build_context(const RunOptions& opts, const SweepPlan& plan, const RankLayout& layout, MPI_Comm comm,
                   const Backend& backend);

// This node as discover_node() finds it, with the vector set this build's CPU reductions use here
// (cpu.reduce_vector_set: "AVX-512 VBMI", ...; collectives/cpu/cpu_vectors.h): the speed of narrow
// floats on CPU ranks depends on it.
Json describe_this_node();

// "ccbench 0.3.0 (git abc123) built with: CUDA 13.0 (sm 90), NCCL 2.28.9, ibverbs, hwloc; MPI: ..."
std::string version_text();

// Versions of the libraries in use: mpi, cuda_runtime, cuda_driver, nccl (those built in).
Json library_versions();

}  // namespace ccbench
