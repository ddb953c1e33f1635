#pragma once
// The CPU implementations of collectives (Implementation, collectives/implementation.h), for the
// registry. All run on CPU ranks with host buffers; run() returns when this rank's part is done.
//
//   ring  our ring (NCCL's loop structure) over CPU channels: allreduce, allgather,
//         reducescatter, broadcast and reduce (pipelined chains from and to the root), sendrecv.
//   tree  allreduce on NCCL's double binary tree, allgather by Bruck's log-depth exchange.
//   direct  a channel between every pair of ranks, one stream per peer: alltoall, alltoallv,
//         gather, scatter.
//   hier  allreduce in stages over the nodes (emulated ones included): a chain reduce to each
//         node's leader, a ring all-reduce among the leaders, a chain broadcast in each node.
//   mpi   the MPI library's own collectives (the baseline).
//
// ring, tree and direct move data in slots of CCBENCH_CPU_SLOT_BYTES bytes (default 256K: a multiple of
// 64, K/M suffixes binary), CCBENCH_CPU_SLOT_DEPTH slots per channel (default 4, 2..64), read in
// setup() and equal on every rank; channels use --transport auto | shm | mpi.
#include <memory>

#include "collectives/implementation.h"

namespace ccbench {

std::unique_ptr<Implementation> make_ring_cpu();
std::unique_ptr<Implementation> make_tree_cpu();
std::unique_ptr<Implementation> make_direct_cpu();
std::unique_ptr<Implementation> make_hier_cpu();
std::unique_ptr<Implementation> make_mpi_baseline();

}  // namespace ccbench
