#include "topologies/layout.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "core/error.h"
#include "core/knobs.h"

namespace ccbench {

namespace {

// Numbers nodes by first rank and ranks within their node, from one key per rank.
void number_nodes(RankLayout& l, const std::vector<std::string>& keys) {
  l.node_of.clear();
  l.local_rank_of.clear();
  std::map<std::string, int> node_index, next_local;
  for (const std::string& k : keys) {
    auto [it, fresh] = node_index.try_emplace(k, static_cast<int>(node_index.size()));
    l.node_of.push_back(it->second);
    l.local_rank_of.push_back(next_local[k]++);
  }
  l.nodes = static_cast<int>(node_index.size());
}

}  // namespace

int RankLayout::local_ranks() const { return static_cast<int>(std::count(node_of.begin(), node_of.end(), node())); }

int RankLayout::max_ranks_per_node() const {
  std::map<int, int> per_node;
  int most = 0;
  for (int n : node_of) most = std::max(most, ++per_node[n]);
  return most;
}

int RankLayout::host_local_rank(int r) const {
  if (!host_local_of.empty()) return host_local_of[static_cast<size_t>(r)];
  int k = 0;
  for (int q = 0; q < r; ++q) k += host_of[q] == host_of[r];
  return k;
}

int RankLayout::host_ranks() const {
  return static_cast<int>(std::count(host_of.begin(), host_of.end(), host_of[rank]));
}

bool RankLayout::same_gpu(int a, int b, int visible_gpus) const {
  const size_t ua = static_cast<size_t>(a), ub = static_cast<size_t>(b);
  if (host_of[ua] != host_of[ub]) return false;
  if (!gpu_of.empty()) return !gpu_of[ua].empty() && gpu_of[ua] == gpu_of[ub];
  const int gpus = std::max(visible_gpus, 1);
  return host_local_rank(a) % gpus == host_local_rank(b) % gpus;
}

int RankLayout::first_rank_sharing_a_gpu(int visible_gpus) const {
  for (int b = 0; b < nranks; ++b)
    for (int a = 0; a < b; ++a)
      if (same_node(a, b) && same_gpu(a, b, visible_gpus)) return b;
  return -1;
}

RankLayout RankLayout::subset(const std::vector<int>& members) const {
  RankLayout l;
  l.nranks = static_cast<int>(members.size());
  l.rank = static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
  std::vector<std::string> keys;
  for (int m : members) {
    l.host_of.push_back(host_of[static_cast<size_t>(m)]);
    keys.push_back(std::to_string(node_of[static_cast<size_t>(m)]));
    if (!numa_of.empty()) l.numa_of.push_back(numa_of[static_cast<size_t>(m)]);
    if (!gpu_of.empty()) l.gpu_of.push_back(gpu_of[static_cast<size_t>(m)]);
    l.host_local_of.push_back(host_local_rank(m));
  }
  if (!gpu_peer_access.empty())
    for (int a : members) {
      l.gpu_peer_access.emplace_back();
      for (int b : members)
        l.gpu_peer_access.back().push_back(gpu_peer_access[static_cast<size_t>(a)][static_cast<size_t>(b)]);
    }
  if (!gpu_links.empty())
    for (int a : members) {
      l.gpu_links.emplace_back();
      for (int b : members) l.gpu_links.back().push_back(gpu_links[static_cast<size_t>(a)][static_cast<size_t>(b)]);
    }
  number_nodes(l, keys);
  l.hosts = static_cast<int>(std::set<std::string>(l.host_of.begin(), l.host_of.end()).size());
  l.emulated = emulated;
  return l;
}

RankLayout RankLayout::from_hosts(int rank, std::vector<std::string> hosts, const std::vector<std::string>& host_ids) {
  RankLayout l;
  l.rank = rank;
  l.nranks = static_cast<int>(hosts.size());
  std::vector<std::string> keys = hosts;
  for (std::size_t r = 0; r < keys.size() && r < host_ids.size(); ++r) {
    if (host_ids[r].empty()) continue;
    keys[r] = "id:" + host_ids[r];
    l.emulated = true;
  }
  number_nodes(l, keys);
  l.hosts = static_cast<int>(std::set<std::string>(hosts.begin(), hosts.end()).size());
  l.host_of = std::move(hosts);
  return l;
}

void RankLayout::emulate_nodes(int n) {
  if (n == 1) return;
  std::map<int, int> size_of;
  for (int v : node_of) ++size_of[v];
  int smallest = nranks;
  for (const auto& [node, size] : size_of) smallest = std::min(smallest, size);
  if (n < 1 || n > smallest)
    fail(ExitCode::usage,
         "--emulate-nodes {}: expected 1 to {} (each of the {} node(s) of this run has at least {} "
         "rank(s), and every emulated node needs one)",
         n, smallest, nodes, smallest);
  // Rank r of a node of k ranks goes to part floor(local * n / k): contiguous, in rank order.
  std::vector<std::string> keys;
  for (int r = 0; r < nranks; ++r) {
    const int k = size_of[node_of[r]];
    keys.push_back(std::to_string(node_of[r]) + "/" + std::to_string(local_rank_of[r] * n / k));
  }
  number_nodes(*this, keys);
  emulated = true;
}

std::string host_id_from_environment() { return env_text(Knob::hostid).value_or(""); }

}  // namespace ccbench
