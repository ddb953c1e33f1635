#pragma once
// Where the ranks of a run are: hosts, nodes and node-local numbering. Built once by the
// harness (an MPI all-gather of host names) and shared read-only by every layer.
#include <string>
#include <vector>

namespace ccbench {

struct RankLayout {
  int rank = 0;
  int nranks = 1;
  std::vector<std::string> host_of;  // host name of every rank
  std::vector<int> node_of;          // node index of every rank (nodes numbered by first rank)
  std::vector<int> local_rank_of;    // rank within its node, for every rank
  int nodes = 1;

  int node() const { return node_of[rank]; }
  int local_rank() const { return local_rank_of[rank]; }
  int local_ranks() const;  // ranks on this rank's node
  int max_ranks_per_node() const;
  bool same_node(int a, int b) const { return node_of[a] == node_of[b]; }
  const std::string& host() const { return host_of[rank]; }

  // A layout from host names alone (ranks on one host form a node, in rank order).
  static RankLayout from_hosts(int rank, std::vector<std::string> hosts);
};

}  // namespace ccbench
