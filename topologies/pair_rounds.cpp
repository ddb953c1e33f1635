#include "topologies/pair_rounds.h"

#include <algorithm>
#include <map>

namespace ccbench {

std::vector<PairRound> round_robin(int n) {
  if (n < 2) return {};
  // An odd count gets a resting place: whoever meets it sits the round out.
  const int m = n % 2 ? n + 1 : n;
  const int turning = m - 1;  // items 0..m-2 turn around the circle; item m-1 stays
  std::vector<PairRound> rounds;
  for (int r = 0; r < turning; ++r) {
    PairRound round;
    auto add = [&](int a, int b) {
      if (a < n && b < n) round.push_back({std::min(a, b), std::max(a, b)});
    };
    add(r, m - 1);
    for (int i = 1; i < m / 2; ++i) add((r + i) % turning, (r - i + turning) % turning);
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<PairRound> pair_rounds(const std::vector<int>& node_of, bool serial) {
  const int nranks = static_cast<int>(node_of.size());
  std::vector<PairRound> rounds;
  if (serial) {
    for (int a = 0; a < nranks; ++a)
      for (int b = a + 1; b < nranks; ++b) rounds.push_back({{a, b}});
    return rounds;
  }
  std::map<int, std::vector<int>> by_node;
  for (int r = 0; r < nranks; ++r) by_node[node_of[static_cast<size_t>(r)]].push_back(r);
  std::vector<std::vector<int>> nodes;
  for (auto& [id, ranks] : by_node) nodes.push_back(std::move(ranks));
  // The k-th rank pair of each node pair of a node round runs in sub-round k.
  for (const PairRound& node_round : round_robin(static_cast<int>(nodes.size()))) {
    for (size_t k = 0;; ++k) {
      PairRound round;
      for (const auto& [x, y] : node_round) {
        const auto& a = nodes[static_cast<size_t>(x)];
        const auto& b = nodes[static_cast<size_t>(y)];
        if (k < a.size() * b.size()) {
          const int p = a[k / b.size()], q = b[k % b.size()];
          round.push_back({std::min(p, q), std::max(p, q)});
        }
      }
      if (round.empty()) break;
      std::sort(round.begin(), round.end());
      rounds.push_back(std::move(round));
    }
  }
  // Pairs within a node: the k-th of every node together.
  std::vector<PairRound> within(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (size_t a = 0; a < nodes[i].size(); ++a)
      for (size_t b = a + 1; b < nodes[i].size(); ++b) within[i].push_back({nodes[i][a], nodes[i][b]});
  for (size_t k = 0;; ++k) {
    PairRound round;
    for (const PairRound& w : within)
      if (k < w.size()) round.push_back(w[k]);
    if (round.empty()) break;
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
  }
  return rounds;
}

long long pair_round_count(long long nodes, bool serial) {
  if (nodes < 2) return 0;
  if (serial) return nodes * (nodes - 1) / 2;
  return nodes % 2 ? nodes : nodes - 1;
}

}  // namespace ccbench
