#pragma once
// Tree schedules (pure; usable in CUDA kernels): NCCL's double binary tree for all-reduce and a
// log-depth (Bruck) exchange for all-gather.
#include <cstddef>
#include <vector>

#include "collectives/numeric.h"
#include "collectives/schedules/ring.h"

namespace ccbench::schedule {

// The trees of a tree all-reduce (--tree): one binary tree carrying the whole buffer, or NCCL's
// double binary tree (two trees, half the buffer each).
enum class TreeShape : int { binary = 1, double_binary = 2 };
CCB_HD int tree_count(TreeShape s) { return static_cast<int>(s); }

// A rank's place in one tree: parent (-1 at the root) and up to two children (-1 where absent).
struct TreeLinks {
  int parent = -1;
  int child[2] = {-1, -1};
  CCB_HD int nchildren() const { return (child[0] >= 0) + (child[1] >= 0); }
};

// Binary tree over ranks 0..n-1 rooted at 0 that alternates leaves and inner nodes (NCCL's
// ncclGetBtree): the parent of rank r clears r's lowest set bit and sets the bit above it
// (or just clears it when that is out of range); children are r -/+ half the lowest set bit.
CCB_HD TreeLinks binary_tree(int n, int rank) {
  TreeLinks t;
  int bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  if (rank == 0) {
    if (n > 1) t.child[0] = bit >> 1;
    return t;
  }
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  t.parent = up;
  int low = bit >> 1;
  if (low > 0) {
    t.child[0] = rank - low;
    int down1 = rank + low;
    while (low > 0 && down1 >= n) {
      low >>= 1;
      down1 = rank + low;
    }
    t.child[1] = (low > 0) ? down1 : -1;
  }
  return t;
}

// NCCL's double binary tree: tree 0 is binary_tree; tree 1 mirrors it (even n) or shifts it by one
// rank (odd n), so that most inner nodes of one tree are leaves of the other.
CCB_HD TreeLinks double_tree(int n, int rank, int which) {
  if (which == 0) return binary_tree(n, rank);
  TreeLinks t, b;
  if (n % 2 == 1) {
    b = binary_tree(n, mod_ranks(rank - 1, n));
    t.parent = b.parent < 0 ? -1 : (b.parent + 1) % n;
    for (int c = 0; c < 2; ++c) t.child[c] = b.child[c] < 0 ? -1 : (b.child[c] + 1) % n;
  } else {
    b = binary_tree(n, n - 1 - rank);
    t.parent = b.parent < 0 ? -1 : n - 1 - b.parent;
    for (int c = 0; c < 2; ++c) t.child[c] = b.child[c] < 0 ? -1 : n - 1 - b.child[c];
  }
  return t;
}

// The part of an all-reduce buffer each tree carries: tree 0 the first half, tree 1 the rest
// (halves rounded to `align` elements); with one tree, tree 0 carries it all.
CCB_HD Piece tree_share(std::size_t count, std::size_t align, int which, int trees = 2) {
  if (trees == 1) return which == 0 ? Piece{0, count} : Piece{count, 0};
  std::size_t first = round_up(div_up(count, 2), align);
  if (first > count) first = count;
  return which == 0 ? Piece{0, first} : Piece{first, count - first};
}

// Bruck all-gather round k (distance 2^k) for rank r: r sends the `blocks` pieces starting at
// piece r (mod n) to rank r - 2^k and receives `blocks` pieces starting at piece r + 2^k from
// rank r + 2^k. ceil(log2 n) rounds; each piece lands at its final place in the output.
struct BruckRound {
  int send_to, recv_from;
  int send_first, recv_first;  // first piece index (pieces wrap around mod n)
  int blocks;
};
CCB_HD int bruck_rounds(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}
CCB_HD BruckRound bruck_round(int n, int rank, int k) {
  const int dist = 1 << k;
  const int blocks = dist < n - dist ? dist : n - dist;
  return {mod_ranks(rank - dist, n), mod_ranks(rank + dist, n), rank, mod_ranks(rank + dist, n), blocks};
}

// The ranks whose memory a Bruck all-gather on `rank` writes: every round's send_to, rank - 2^k
// for k < bruck_rounds(n), ceil(log2 n) distinct ranks (0 < 2^j - 2^k < n for j > k). Its entry
// barrier is a dissemination barrier over the same rounds (round k: post to send_to, wait for
// recv_from), after which every rank has heard from every other through a chain, so these are
// all the peers it maps: never every rank of the node.
inline std::vector<int> bruck_peers(int n, int rank) {
  std::vector<int> peers;
  for (int k = 0; k < bruck_rounds(n); ++k) peers.push_back(bruck_round(n, rank, k).send_to);
  return peers;
}

}  // namespace ccbench::schedule
