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

#include "collectives/types.h"
#include "topologies/system.h"

namespace ccbench {

// The algorithms the model knows, by the names of our implementations:
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
const std::vector<std::string>& model_algorithms();

struct Prediction {
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::string unsupported;  // why this algorithm cannot run this case ("" when it can)
};

// One algorithm and collective over one system, prepared once and then costed for any size.
class CollectiveModel {
 public:
  // Throws Error(usage) for an unknown algorithm name.
  CollectiveModel(const SystemTopology& system, Collective coll, const std::string& algorithm);
  ~CollectiveModel();
  CollectiveModel(CollectiveModel&&) noexcept;
  // bytes: the algbw size S as in ccbench run (all-gather: total output bytes).
  Prediction predict(std::uint64_t bytes) const;

 private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

}  // namespace ccbench
