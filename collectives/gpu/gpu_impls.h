#pragma once
// Our CUDA implementations. ring, tree's all-reduce and hier move data through FIFO connections
// over the GPU path the run plans (p2p, host or net: transports/gpu/gpu_paths.h); oneshot, twoshot,
// tree's all-gather and ce address peers' memory directly (CUDA IPC), so they run over p2p only:
//   ring     ring all-reduce / all-gather / reduce-scatter, and reduce as a chain toward the
//            root, over FIFO connections, pipelined in slots, one block per channel
//   tree     double binary tree all-reduce (reduce up, broadcast down, pipelined) and log-depth
//            (Bruck) all-gather with direct writes
//   oneshot  all-reduce for small sizes: every rank pushes its input to every peer as LL lines
//            (data and flag in one store) and reduces locally; no barrier. Reduce: the root
//            reads every rank's input directly and reduces; two barriers
//   twoshot  all-reduce: each rank reduces its chunk reading every input directly, then writes
//            the result into every output; two barriers
//   ce       all-gather, all-to-all, alltoallv, gather and scatter with the copy engines: each
//            piece copied straight into (scatter: out of) a peer's buffer, peers concurrently
//   best     the fastest of the above for each collective and size (thresholds in knobs.h)
//   hier     two-level all-reduce and all-gather over the nodes (hier_plan.h): ring in the node,
//            ring across the nodes per local rank, ring in the node; best never picks it
#include <memory>

#include "collectives/implementation.h"

namespace ccbench {

std::unique_ptr<Implementation> make_ring_gpu();
// A ring whose avg divides by `avg_divisor` instead of its own ranks: it completes sums that
// other rings began (hier's ring across the nodes divides by the ranks of the whole run).
std::unique_ptr<Implementation> make_ring_gpu_avg_over(int avg_divisor);
std::unique_ptr<Implementation> make_tree_gpu();
std::unique_ptr<Implementation> make_oneshot_gpu();
std::unique_ptr<Implementation> make_twoshot_gpu();
std::unique_ptr<Implementation> make_ce_gpu();
std::unique_ptr<Implementation> make_best_gpu();
std::unique_ptr<Implementation> make_hier_gpu();
// Reads every tuning variable above (CCBENCH_GPU_*, CCBENCH_ONESHOT_MAX_BYTES, CCBENCH_BEST_*);
// throws Error(usage) naming a bad one.
void check_gpu_tuning_environment();

}  // namespace ccbench
