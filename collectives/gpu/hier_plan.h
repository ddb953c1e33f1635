#pragma once
// The schedule of `hier` on GPU ranks as data (pure: no CUDA, no MPI, testable without a GPU).
// The run is N nodes (RankLayout nodes, emulated ones included) of L ranks each; a rank is
// (node k, local index j). Two levels of rings, each a sub-communicator:
//   node    the L ranks of one node (intra-node path: p2p, or host)
//   across  the N ranks with the same local index, one per node (inter-node path: net)
// all-reduce of C elements, q = C / L, r = C % L:
//   1. reduce-scatter in the node: local rank j ends with the node's sum of elements [jq, jq + q)
//   2. all-reduce of that share across the nodes (in place)
//   3. all-gather in the node (in place)
//   the r trailing elements (C not a multiple of L): an all-reduce in the node, then one across
//   the nodes (in place): at most L - 1 elements, exact like the rest.
// avg divides once, by N * L, where the sum completes: on several nodes the steps in the node
// reduce as sum (Step::partial) and the ring across divides by the ranks of the whole run
// (make_ring_gpu_avg_over); on one node the node's steps divide, by L.
// all-gather of C elements per rank: across the nodes first (each rank gathers the C-element
// blocks of its local index, N blocks), then in the node (blocks of N * C): every byte crosses
// the inter-node path once, (N - 1) * L * C per node. The other order (node first, then the
// node's L * C block across) would send that block on each of the L rings across, L times the
// inter-node bytes. The gathered blocks are then in (j, k) order in a scratch buffer of N * L * C
// elements; L strided copies put them in rank order (k * L + j), which needs the ranks numbered
// node by node (layout_problem says so otherwise).
// With one node only the node steps run; with one rank per node only the steps across.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "collectives/types.h"
#include "topologies/layout.h"
#include "topologies/ring_order.h"

namespace ccbench::hier {

// Where this rank sits in a regular layout (every node has local_ranks ranks).
struct Shape {
  int nodes = 1;
  int local_ranks = 1;
  int node = 0;   // k
  int local = 0;  // j
  int ranks() const { return nodes * local_ranks; }
};

enum class Level { node, across };
enum class Buffer { send, recv, scratch };

struct Region {
  Buffer buffer = Buffer::send;
  std::size_t offset = 0;  // elements from the buffer's start
};

// One step of the schedule, in elements. A ring step runs `coll` over `level`'s ring with
// `count` as CallArgs::count (reduce-scatter: the output per rank; all-gather: the input per
// rank). A copy step copies `height` rows of `width` elements, rows `src_pitch` apart in `from`
// and `dst_pitch` apart in `to` (a plain copy: height 1). A partial ring step is not where the
// reduction completes: avg reduces as sum there.
struct Step {
  enum class Kind { ring, copy } kind = Kind::ring;
  Level level = Level::node;
  Collective coll = Collective::allreduce;
  bool partial = false;
  Region from, to;
  std::size_t count = 0;
  std::size_t width = 0, height = 0, src_pitch = 0, dst_pitch = 0;
};

// The layout as a Shape; the layout must be regular (layout_problem).
Shape shape_of(const RankLayout& layout);
// Why `coll` cannot run in two levels on `layout` (nodes of different sizes; all-gather on more
// than one node of several ranks whose ranks are not numbered node by node), nullopt if it can.
// The same on every rank.
std::optional<std::string> layout_problem(const RankLayout& layout, Collective coll);
// The steps of `coll` (allreduce or allgather) for `count` elements on this rank. Every rank of
// a run gets the same sequence of kinds, levels, collectives and counts. A single rank: one
// copy (nothing to do in place, where the harness gives send == recv).
std::vector<Step> plan(Collective coll, std::size_t count, const Shape& s);
// Elements of scratch the plan of `coll` for `count` elements addresses (0: none).
std::size_t scratch_elements(Collective coll, std::size_t count, const Shape& s);

// The ranks of this rank's ring on `level`, ascending: MPI_Comm_split(comm, color_of(...), rank)
// numbers them in this order.
std::vector<int> level_members(const RankLayout& layout, Level level);
int color_of(const RankLayout& layout, Level level);
// The ring order of a level ring: rank and topo apply to the level's layout as they are; a list
// (ranks of the whole run) keeps the order it gives the level's members, renumbered 0..m-1.
RingOrderChoice level_ring_order(const RingOrderChoice& run, const std::vector<int>& members);
const char* name(Level level);

}  // namespace ccbench::hier
