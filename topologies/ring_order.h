#pragma once
// Ring order as data (NCCL's ring.userRanks): the ranks of a ring as a list, position p sending
// to position p + 1 and the last position to the first. Our ring executors (CPU and GPU) index
// this list instead of assuming rank +/- 1, so a topology-aware or user-given ring is a different
// list, not different code.
//
// Orders (--ring-order):
//   rank  0, 1, ..., n-1 (the default).
//   topo  nodes in node order, each node's ranks contiguous (the ring crosses every node boundary
//         once; emulated nodes count as nodes); within a node, ranks of one NUMA node (RankLayout::
//         numa_of: the GPU's, or the bound cores') are neighbours (NUMA nodes ascending, rank
//         order inside one; ranks of unknown NUMA last). Where the NVLink links between the
//         node's GPUs are known (RankLayout::gpu_links) and differ between pairs (a hybrid cube
//         mesh, NVLink pairs joined by PCIe), the node's ranks instead follow NVLink neighbours:
//         a greedy path from the node's first rank in the NUMA order that always steps to the
//         rank with the most links to the current one (ties: the NUMA order), closed back to its
//         start. Equal links everywhere (NVSwitch) or a pair not known keep the NUMA order.
//   list  an explicit list, inline ("0,2,1,3") or from a file (ranks separated by commas, blanks
//         or new lines; '#' starts a comment).
// Every order is validated against the run's ranks: each rank exactly once, every rank present.
#include <string>
#include <vector>

#include "topologies/layout.h"

namespace ccbench {

enum class RingOrderKind { rank, topo, list };

// What --ring-order asked for; the list itself depends on the ranks of the communicator.
struct RingOrderChoice {
  RingOrderKind kind = RingOrderKind::rank;
  std::vector<int> list;  // kind list: the ranks as given (validated against a run by ring_order())
  std::string text;       // as given on the command line, for messages and records

  std::string kind_name() const;  // "rank", "topo" or "list"
};

// Reads --ring-order's value: rank, topo, an inline list of ranks or a file holding one. Throws
// Error(usage) naming what is wrong (unreadable file, a word that is not a rank, a negative rank,
// an empty list). The ranks' count and coverage are checked later, by ring_order().
RingOrderChoice parse_ring_order(const std::string& value);

// Throws Error(usage) unless `order` holds every rank 0..nranks-1 exactly once; the message names
// the missing, repeated and out-of-range ranks. `what` names the order in the message.
void validate_ring_order(const std::vector<int>& order, int nranks, const std::string& what);

// The ring for `layout`'s ranks (validated). Pure: the same on every rank of the layout.
std::vector<int> ring_order(const RingOrderChoice& choice, const RankLayout& layout);

// The topology-aware order (see above) from a layout and its NVLink links (layout.gpu_links);
// layout.numa_of may be empty.
std::vector<int> topo_ring_order(const RankLayout& layout);
// The same with the links given: links[a][b] for ranks a and b of `layout` (RankLayout::gpu_links
// holds its meaning); empty or of another size: not known. Pure.
std::vector<int> topo_ring_order(const RankLayout& layout, const std::vector<std::vector<int>>& links);

// Whether `order` is 0, 1, ..., n-1.
bool is_rank_order(const std::vector<int>& order);

// Where `rank` sits on `order` (its index); `order` must hold it.
int ring_position(const std::vector<int>& order, int rank);

// "0 2 1 3", at most `limit` ranks followed by "... (N ranks)" when longer.
std::string describe_ring_order(const std::vector<int>& order, std::size_t limit = 64);

}  // namespace ccbench
