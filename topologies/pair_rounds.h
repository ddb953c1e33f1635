#pragma once
// Rounds of disjoint pairs: the schedule that measures every pair of a fleet without measuring
// N(N-1)/2 pairs one after another. Pairs of one round share no node, so on a fabric that is
// not oversubscribed they share no link either and can be measured at the same time: N nodes
// take N-1 rounds (N odd: N, one node resting in each) instead of N(N-1)/2 steps. Pure data:
// `ccbench links`, `--groups pairs` and the model's estimate of an acceptance run read it.
#include <utility>
#include <vector>

namespace ccbench {

using RankPair = std::pair<int, int>;  // lower first
using PairRound = std::vector<RankPair>;

// The round-robin schedule of n items (the circle method: item n-1 stays, the others turn one
// place per round): every pair {a, b} of 0..n-1 exactly once, the pairs of each round disjoint.
// n even: n-1 rounds of n/2 pairs; n odd: n rounds of (n-1)/2 pairs, one item resting (a bye)
// in each. n < 2: no round. Each round's pairs in ascending order.
std::vector<PairRound> round_robin(int n);

// Every pair of ranks of a run, rank r on node node_of[r] (nodes numbered 0, 1, ...), in rounds
// in which no node takes part in two pairs. The node pairs follow round_robin() over the nodes:
// in each of its rounds the k-th rank pair of every node pair runs together (k = 0, 1, ... up to
// the most rank pairs a node pair has); then the pairs within a node, the k-th of every node
// together. One rank per node gives exactly round_robin(nodes). `serial`: one pair per round,
// in rank order (0-1, 0-2, ..., 1-2, ...), for fabrics where pairs measured together would
// contend (oversubscribed, or every node behind one switch port).
std::vector<PairRound> pair_rounds(const std::vector<int>& node_of, bool serial);

// How many rounds pair_rounds() takes for `nodes` nodes of one rank each: nodes-1 for an even
// count, nodes for an odd one (0 for fewer than 2); `serial` gives nodes(nodes-1)/2.
long long pair_round_count(long long nodes, bool serial);

}  // namespace ccbench
