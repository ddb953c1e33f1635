#pragma once
// The performance model: runs our schedules (collectives/schedules, the code the kernels and CPU
// executors follow) step by step over a described system's link graph and predicts time, algbw and
// busbw.
//
// How a step is costed: every transfer of a step is a flow over the links of its path (the
// sender's port, PCIe switch uplinks, NICs, the node's share of the fabric, the receiver's port).
// Flows that share a link share its bandwidth equally; a flow takes its path's latency plus its
// bytes over its share at the narrowest link; a step lasts as long as its slowest flow, and steps
// run one after another (pipelined algorithms: one step per chunk in flight). This is the alpha-beta
// model with contention: ring all-reduce comes out at 2(p-1)·α + 2(p-1)/p · n/B on a uniform system.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/impl_id.h"
#include "collectives/types.h"
#include "topologies/system.h"

namespace ccbench {

// The algorithms the model knows (ModelSchedule, collectives/impl_id.h), by the names of our
// implementations:
//   ring      rings in rank order, one per NIC of a node (rail-aligned across nodes), else one
//   tree      double binary tree over all ranks (all-reduce, pipelined); Bruck (all-gather)
//   hier      intra-node ring reduce-scatter, inter-node ring all-reduce per local rank, intra-node
//             ring all-gather (all-reduce); inter-node then intra-node ring all-gather (all-gather)
//   hier-leader  CPU hier's leader scheme (all-reduce): a pipelined chain reduce to each node's
//             leader (its first rank), a ring all-reduce among the leaders (one NIC per node
//             carries it all), a pipelined chain broadcast from the leader; stage after stage
//   oneshot   every rank sends its whole input to every other rank (all-reduce)
//   twoshot   direct reduce-scatter then direct all-gather (all-reduce)
//   nccl-ring NCCL's ring: the same ring schedule (NCCL's ring and ours move the same bytes)
//   nccl-tree NCCL's tree: a chain inside each node, double binary tree between nodes (all-reduce)
// Their names, in the table's order (collectives/implementations.def).
const std::vector<std::string>& model_algorithms();

// How our GPU kernels run a schedule (collectives/gpu/fifo_ring.cu, fifo_tree.cu, the Bruck kernel): the data
// split over `channels` blocks, each moving at most one FIFO slot per step, its steps one after
// another. Given, the model costs what the schedule alone does not show:
//   ring  every block runs its loops of steps in order: each receiving step of every loop waits
//         for the peer's data (its latency), and the steps that only copy a received slot into the
//         output (the last of every loop) hold the block without using the link: a local copy at
//         local_copy_gbps;
//   tree  each channel is a pipeline of slots through the tree's levels: round r moves slot r-s
//         over the edges of stage s (up: leaves first; down: from the root), so the rounds that
//         fill and drain it use only some edges; each stage waits for its first slot only, and
//         the leaves' last copy out of the down slot follows the last round. With one slot per
//         channel (tree all-reduce at 64 MiB over 2 x 32 channels of 1 MiB) it never fills;
//   Bruck out of place, every rank first copies its own piece into its output (a local copy).
// A flow of `channels` blocks moves at most channels x block_gbps. Other algorithms ignore it.
struct KernelPipeline {
  int channels = 0;            // blocks per ring, per tree, or Bruck's blocks; 0: the schedule alone
  double slot_bytes = 0;       // the FIFO slot (Bruck: none, 0)
  double block_gbps = 0;       // what one block moves per direction at most; 0: no limit
  double local_copy_gbps = 0;  // a GPU copying its own memory (bytes copied per second)
  bool in_place = true;
};

struct Prediction {
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::string unsupported;  // why this algorithm cannot run this case ("" when it can)
};

// One algorithm and collective over one system, prepared once and then costed for any size.
class CollectiveModel {
 public:
  // Throws Error(usage) for a kernel with channels but no slot size or copy rate.
  CollectiveModel(const SystemTopology& system, Collective coll, ModelSchedule algorithm,
                  const KernelPipeline& kernel = {});
  // The same by the algorithm's name (--impl of `ccbench model`); Error(usage) for an unknown one.
  CollectiveModel(const SystemTopology& system, Collective coll, const std::string& algorithm,
                  const KernelPipeline& kernel = {});
  ~CollectiveModel();
  CollectiveModel(CollectiveModel&&) noexcept;
  // bytes: the algbw size S as in ccbench run (all-gather: total output bytes).
  Prediction predict(std::uint64_t bytes) const;

 private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

}  // namespace ccbench
