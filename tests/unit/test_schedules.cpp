// The pure schedules (collectives/schedules): ring steps, ring pieces, NCCL's double binary tree
// and Bruck's all-gather rounds, checked by simulating every rank.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "collectives/schedules/chain.h"
#include "collectives/schedules/ring.h"
#include "collectives/schedules/tree.h"

namespace ccbench::schedule {
namespace {

constexpr int kMaxScheduleRanks = 64;
using RankSet = std::uint64_t;  // which ranks' inputs a value contains
RankSet bit(int r) { return RankSet{1} << r; }
RankSet all_ranks(int n) { return n == 64 ? ~RankSet{0} : bit(n) - 1; }

bool receives(RingOp op) { return op != RingOp::send && op != RingOp::copy_send; }
bool sends(RingOp op) { return op != RingOp::recv && op != RingOp::recv_reduce_copy; }
bool reduces(RingOp op) {
  return op == RingOp::recv_reduce_send || op == RingOp::recv_reduce_copy_send || op == RingOp::recv_reduce_copy;
}
bool reads_input(RingOp op) {
  return op == RingOp::send || op == RingOp::copy_send || reduces(op);
}
bool writes_output(RingOp op) { return op != RingOp::send && op != RingOp::recv_reduce_send; }

// Runs a ring schedule on n simulated ranks for one loop. Messages travel from rank p at step s
// to rank p+1 at step s+1 (checked: what is sent is exactly what the next rank receives). For
// reductions a value is the set of ranks whose input it contains. Returns out[rank][chunk] and
// counts how often each (rank, chunk) output is written.
struct RingRun {
  std::vector<std::vector<RankSet>> out;
  std::vector<std::vector<int>> writes;
  std::vector<int> completed_at;  // per chunk: ranks where it was first fully reduced (count)
};

template <typename StepFn>
RingRun simulate_ring(int n, int steps, StepFn step, bool reduction) {
  RingRun run;
  run.out.assign(n, std::vector<RankSet>(n, 0));
  run.writes.assign(n, std::vector<int>(n, 0));
  run.completed_at.assign(n, 0);
  // in_flight[p]: what rank p sent at the previous step (chunk, value), if anything.
  std::vector<std::optional<std::pair<int, RankSet>>> in_flight(n);
  for (int s = 0; s < steps; ++s) {
    std::vector<std::optional<std::pair<int, RankSet>>> sent(n);
    for (int p = 0; p < n; ++p) {
      const RingStep st = step(n, p, s);
      EXPECT_GE(st.chunk, 0);
      EXPECT_LT(st.chunk, n);
      const int prev = mod_ranks(p - 1, n);
      RankSet v = 0;
      if (receives(st.op)) {
        // Exactly what the previous rank sent at the previous step, same chunk.
        EXPECT_TRUE(in_flight[prev].has_value()) << "n=" << n << " rank " << p << " step " << s << " receives nothing";
        if (!in_flight[prev]) continue;
        EXPECT_EQ(in_flight[prev]->first, st.chunk) << "n=" << n << " rank " << p << " step " << s;
        v = in_flight[prev]->second;
        in_flight[prev].reset();
      } else {
        EXPECT_FALSE(in_flight[prev].has_value()) << "n=" << n << " rank " << p << " step " << s
                                                  << " leaves a message unreceived";
      }
      if (reads_input(st.op)) {
        const RankSet mine = reduction ? bit(p) : bit(st.chunk);
        if (reduction) {
          EXPECT_EQ(v & mine, 0u) << "rank " << p << "'s input counted twice, n=" << n;
        }
        if (!reduction) {
          EXPECT_EQ(st.chunk, p) << "all-gather: rank " << p << " sends someone else's input";
        }
        v |= mine;
      }
      if (reduces(st.op) && v == all_ranks(n) && writes_output(st.op)) ++run.completed_at[st.chunk];
      if (writes_output(st.op)) {
        run.out[p][st.chunk] = v;
        ++run.writes[p][st.chunk];
      }
      if (sends(st.op)) sent[p] = std::make_pair(st.chunk, v);
    }
    for (int p = 0; p < n; ++p) {
      EXPECT_FALSE(in_flight[p].has_value()) << "n=" << n << " step " << s << ": rank " << p
                                             << "'s message was not received";
      in_flight[p] = sent[p];
    }
  }
  for (int p = 0; p < n; ++p) EXPECT_FALSE(in_flight[p].has_value()) << "n=" << n << ": last step sends";
  return run;
}

TEST(RingSchedule, AllReduceSendsWhatTheNextRankReceivesAndEndsReducedEverywhere) {
  for (int n = 2; n <= kMaxScheduleRanks; ++n) {
    ASSERT_EQ(ring_allreduce_steps(n), 2 * n - 1);
    RingRun run = simulate_ring(n, ring_allreduce_steps(n), ring_allreduce_step, true);
    for (int c = 0; c < n; ++c) {
      EXPECT_EQ(run.completed_at[c], 1) << "n=" << n << " chunk " << c << " is fully reduced at "
                                        << run.completed_at[c] << " ranks";
      for (int p = 0; p < n; ++p) {
        EXPECT_EQ(run.out[p][c], all_ranks(n)) << "n=" << n << " rank " << p << " chunk " << c;
        EXPECT_EQ(run.writes[p][c], 1) << "n=" << n << " rank " << p << " chunk " << c;
      }
    }
  }
}

TEST(RingSchedule, ReduceScatterEndsEachChunkReducedAtItsRank) {
  for (int n = 2; n <= kMaxScheduleRanks; ++n) {
    RingRun run = simulate_ring(n, ring_reducescatter_steps(n), ring_reducescatter_step, true);
    for (int c = 0; c < n; ++c) {
      EXPECT_EQ(run.completed_at[c], 1) << "n=" << n << " chunk " << c;
      for (int p = 0; p < n; ++p) {
        // Only rank c writes chunk c, fully reduced.
        EXPECT_EQ(run.writes[p][c], p == c ? 1 : 0) << "n=" << n << " rank " << p << " chunk " << c;
        if (p == c) {
          EXPECT_EQ(run.out[p][c], all_ranks(n)) << "n=" << n << " rank " << p;
        }
      }
    }
  }
}

TEST(RingSchedule, AllGatherDeliversEveryPieceEverywhereOnce) {
  for (int n = 2; n <= kMaxScheduleRanks; ++n) {
    RingRun run = simulate_ring(n, ring_allgather_steps(n), ring_allgather_step, false);
    for (int p = 0; p < n; ++p)
      for (int c = 0; c < n; ++c) {
        EXPECT_EQ(run.out[p][c], bit(c)) << "n=" << n << " rank " << p << " piece " << c;
        EXPECT_EQ(run.writes[p][c], 1) << "n=" << n << " rank " << p << " piece " << c;
      }
  }
}

// The chain reduce, followed from its first rank along the ring: every rank receives exactly what
// the previous one sent, adds its own input once, and only the root stores, the sum of all inputs.
TEST(ChainSchedule, ReduceCarriesEveryInputOnceToTheRootOnly) {
  for (int n = 2; n <= kMaxScheduleRanks; ++n) {
    for (int root = 0; root < n; ++root) {
      std::optional<RankSet> carried;  // what the previous rank on the chain sent
      for (int k = 1; k <= n; ++k) {
        const int p = mod_ranks(root + k, n);
        const RingOp op = chain_reduce_op(n, p, root);
        EXPECT_EQ(receives(op), carried.has_value()) << "n=" << n << " root " << root << " rank " << p;
        EXPECT_TRUE(reads_input(op)) << "n=" << n << " root " << root << " rank " << p;
        EXPECT_EQ(writes_output(op), p == root) << "n=" << n << " root " << root << " rank " << p;
        EXPECT_EQ(sends(op), p != root) << "n=" << n << " root " << root << " rank " << p;
        const RankSet v = carried.value_or(0);
        EXPECT_EQ(v & bit(p), 0u) << "n=" << n << " root " << root << ": rank " << p << " counted twice";
        carried = v | bit(p);
        if (p == root) {
          EXPECT_EQ(*carried, all_ranks(n)) << "n=" << n << " root " << root;
          EXPECT_TRUE(ring_op_finalizes(op)) << "n=" << n << " root " << root;
        }
      }
    }
  }
}

TEST(RingSchedule, PiecesCoverTheBufferExactlyOnce) {
  const std::size_t aligns[] = {1, 4, 16, 64};
  for (int n : {1, 2, 3, 4, 5, 7, 8, 13, 64}) {
    for (std::size_t align : aligns) {
      for (std::size_t slice : {align, 2 * align, 3 * align, 64 * align, 1024 * align}) {
        const std::size_t loop_elems = static_cast<std::size_t>(n) * slice;
        std::vector<std::size_t> counts = {0, 1, 2, 3, 7, 13, 31, 97, 1009, 65537, 1000003,
                                           loop_elems - 1, loop_elems, loop_elems + 1, 3 * loop_elems + 5};
        for (std::size_t count : counts) {
          if (count > 2000000) continue;
          const std::size_t loops = ring_loops(count, n, slice);
          std::vector<Piece> pieces;
          for (std::size_t l = 0; l < loops; ++l)
            for (int c = 0; c < n; ++c) {
              const Piece p = ring_piece(count, n, slice, align, l, c);
              ASSERT_LE(p.count, slice);
              ASSERT_LE(p.offset + p.count, count);
              if (p.count == 0) continue;
              // Whole multiples of align except a piece that ends the buffer.
              if (p.offset + p.count != count) {
                EXPECT_EQ(p.count % align, 0u);
              }
              pieces.push_back(p);
            }
          std::sort(pieces.begin(), pieces.end(), [](Piece a, Piece b) { return a.offset < b.offset; });
          std::size_t next = 0;
          for (const Piece& p : pieces) {
            ASSERT_EQ(p.offset, next) << "n=" << n << " count=" << count << " slice=" << slice << " align=" << align;
            next += p.count;
          }
          EXPECT_EQ(next, count) << "n=" << n << " count=" << count << " slice=" << slice;
        }
      }
    }
  }
}

// ---- double binary tree ----

struct TreeCheck {
  int root = -1;
  int inner = 0;
};

TreeCheck check_tree(int n, int which) {
  TreeCheck out;
  std::vector<TreeLinks> t(n);
  for (int r = 0; r < n; ++r) t[r] = double_tree(n, r, which);
  for (int r = 0; r < n; ++r) {
    const TreeLinks& l = t[r];
    if (l.parent < 0) {
      EXPECT_EQ(out.root, -1) << "n=" << n << " tree " << which << ": two roots " << out.root << " and " << r;
      out.root = r;
    } else {
      EXPECT_LT(l.parent, n);
      EXPECT_NE(l.parent, r);
      const TreeLinks& p = t[l.parent];
      const int listed = (p.child[0] == r) + (p.child[1] == r);
      EXPECT_EQ(listed, 1) << "n=" << n << " tree " << which << ": parent " << l.parent << " of " << r
                           << " lists it " << listed << " times";
    }
    EXPECT_LE(l.nchildren(), 2);
    if (l.child[0] >= 0 && l.child[1] >= 0) {
      EXPECT_NE(l.child[0], l.child[1]);
    }
    for (int c : l.child) {
      if (c < 0) continue;
      EXPECT_LT(c, n);
      EXPECT_EQ(t[c].parent, r) << "n=" << n << " tree " << which << ": child " << c << " of " << r;
    }
    if (l.nchildren() > 0) ++out.inner;
  }
  EXPECT_GE(out.root, 0) << "n=" << n << " tree " << which << " has no root";
  // Every rank reaches the root: connected and acyclic, each rank exactly once.
  for (int r = 0; r < n; ++r) {
    int x = r, hops = 0;
    while (x != out.root && x >= 0 && hops <= n) {
      x = t[x].parent;
      ++hops;
    }
    EXPECT_EQ(x, out.root) << "n=" << n << " tree " << which << ": rank " << r << " does not reach the root";
  }
  return out;
}

TEST(DoubleTree, BothTreesSpanEveryRankOnce) {
  for (int n = 1; n <= 256; ++n) {
    const TreeCheck t0 = check_tree(n, 0), t1 = check_tree(n, 1);
    EXPECT_EQ(t0.root, 0);
    // Tree 1 mirrors tree 0 (even n) or shifts it by one (odd n).
    EXPECT_EQ(t1.root, n % 2 == 0 ? n - 1 : 1 % n) << "n=" << n;
  }
}

TEST(DoubleTree, InnerNodesOfOneTreeAreLeavesOfTheOther) {
  for (int n = 2; n <= 256; ++n) {
    std::vector<int> inner_in_both;
    for (int r = 0; r < n; ++r) {
      const bool inner0 = double_tree(n, r, 0).nchildren() > 0;
      const bool inner1 = double_tree(n, r, 1).nchildren() > 0;
      if (inner0 && inner1) inner_in_both.push_back(r);
    }
    // Even n (mirror): no rank is inner in both trees, so each rank forwards data in one tree only.
    // Odd n (shift by one): exactly rank 0 is, the root of tree 0 and the image of tree 0's rank
    // n-1 (an even, inner rank) in tree 1.
    if (n % 2 == 0) {
      EXPECT_TRUE(inner_in_both.empty()) << "n=" << n;
    } else {
      EXPECT_EQ(inner_in_both, std::vector<int>{0}) << "n=" << n;
    }
  }
}

TEST(DoubleTree, ShareSplitsTheBufferInTwo) {
  for (std::size_t count : {0u, 1u, 2u, 3u, 63u, 64u, 65u, 1000003u})
    for (std::size_t align : {1u, 16u, 64u}) {
      const Piece a = tree_share(count, align, 0), b = tree_share(count, align, 1);
      EXPECT_EQ(a.offset, 0u);
      EXPECT_EQ(a.offset + a.count, b.offset);
      EXPECT_EQ(b.offset + b.count, count);
      if (a.count < count) {
        EXPECT_EQ(a.count % align, 0u);
      }
    }
}

TEST(DoubleTree, OneTreeCarriesTheWholeBuffer) {
  EXPECT_EQ(tree_count(TreeShape::binary), 1);
  EXPECT_EQ(tree_count(TreeShape::double_binary), 2);
  for (std::size_t count : {0u, 1u, 63u, 1000003u}) {
    const Piece a = tree_share(count, 64, 0, 1), b = tree_share(count, 64, 1, 1);
    EXPECT_EQ(a.offset, 0u);
    EXPECT_EQ(a.count, count);
    EXPECT_EQ(b.count, 0u);
  }
}

// ---- Bruck all-gather ----

TEST(Bruck, RoundsDeliverEveryBlockToEveryRankOnce) {
  for (int n = 1; n <= kMaxScheduleRanks; ++n) {
    std::vector<RankSet> have(n);
    for (int r = 0; r < n; ++r) have[r] = bit(r);
    for (int k = 0; k < bruck_rounds(n); ++k) {
      std::vector<RankSet> next = have;
      for (int r = 0; r < n; ++r) {
        const BruckRound br = bruck_round(n, r, k);
        // The receiver expects exactly this: from r, the same first block and count.
        const BruckRound peer = bruck_round(n, br.send_to, k);
        EXPECT_EQ(peer.recv_from, r) << "n=" << n << " round " << k;
        EXPECT_EQ(peer.recv_first, br.send_first) << "n=" << n << " round " << k;
        EXPECT_EQ(peer.blocks, br.blocks);
        EXPECT_GT(br.blocks, 0);
        for (int b = 0; b < br.blocks; ++b) {
          const int block = (br.send_first + b) % n;
          EXPECT_TRUE(have[r] & bit(block)) << "n=" << n << " round " << k << ": rank " << r << " sends block "
                                            << block << " it does not have";
          EXPECT_FALSE(next[br.send_to] & bit(block)) << "n=" << n << " round " << k << ": rank " << br.send_to
                                                      << " gets block " << block << " twice";
          next[br.send_to] |= bit(block);
        }
      }
      have = next;
    }
    for (int r = 0; r < n; ++r) EXPECT_EQ(have[r], all_ranks(n)) << "n=" << n << " rank " << r;
  }
}

// The peers the GPU Bruck all-gather maps (bruck_peers) are ceil(log2 n) distinct ranks, and its
// entry barrier over them (round k: post to send_to, wait for recv_from) leaves every rank having
// heard from every other through a chain of posts: the kernel may then write any peer's output.
TEST(Bruck, PeersAreLogNAndTheirDisseminationBarrierReachesEveryRank) {
  for (int n = 1; n <= kMaxScheduleRanks; ++n) {
    std::vector<RankSet> heard(n);  // whose arrival each rank knows of (transitively)
    for (int r = 0; r < n; ++r) {
      heard[r] = bit(r);
      const std::vector<int> peers = bruck_peers(n, r);
      EXPECT_EQ(static_cast<int>(peers.size()), bruck_rounds(n)) << "n=" << n;
      EXPECT_LE(static_cast<int>(peers.size()), std::max(0, n - 1));
      RankSet seen = bit(r);
      for (int p : peers) {
        EXPECT_FALSE(seen & bit(p)) << "n=" << n << " rank " << r << " maps rank " << p << " twice, or itself";
        seen |= bit(p);
      }
    }
    for (int k = 0; k < bruck_rounds(n); ++k) {
      std::vector<RankSet> next = heard;
      for (int r = 0; r < n; ++r) {
        const BruckRound br = bruck_round(n, r, k);
        EXPECT_EQ(br.send_to, bruck_peers(n, r)[static_cast<std::size_t>(k)]);
        next[br.send_to] |= heard[r];  // the post carries everything r knew before this round
      }
      heard = next;
    }
    for (int r = 0; r < n; ++r) EXPECT_EQ(heard[r], all_ranks(n)) << "n=" << n << " rank " << r;
  }
}

}  // namespace
}  // namespace ccbench::schedule
