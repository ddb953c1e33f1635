#include "topologies/layout.h"

#include <algorithm>
#include <map>

namespace ccbench {

int RankLayout::local_ranks() const {
  return static_cast<int>(std::count(node_of.begin(), node_of.end(), node()));
}

int RankLayout::max_ranks_per_node() const {
  std::map<int, int> per_node;
  int most = 0;
  for (int n : node_of) most = std::max(most, ++per_node[n]);
  return most;
}

RankLayout RankLayout::from_hosts(int rank, std::vector<std::string> hosts) {
  RankLayout l;
  l.rank = rank;
  l.nranks = static_cast<int>(hosts.size());
  std::map<std::string, int> node_index, next_local;
  for (const std::string& h : hosts) {
    auto [it, fresh] = node_index.try_emplace(h, static_cast<int>(node_index.size()));
    l.node_of.push_back(it->second);
    l.local_rank_of.push_back(next_local[h]++);
  }
  l.nodes = static_cast<int>(node_index.size());
  l.host_of = std::move(hosts);
  return l;
}

}  // namespace ccbench
