// collectives/gpu/hier_plan: the two-level schedule of GPU `hier`, executed here on host buffers
// by a reference model of the ring collectives (every rank of a level ring at once), for every
// count from 0 up past a few times the ranks (remainders, counts below the ranks of a node), in
// place and out of place, on several node x rank shapes, sum and integer avg (divided once, by
// the ranks of the run, where the sum completes). The model also checks that every ring
// call is either out of place with disjoint buffers or in the in-place form the ring supports,
// that every region lies inside its buffer, and that all ranks run the same ring calls.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "collectives/gpu/hier_plan.h"

namespace ccbench::hier {
namespace {

using Value = std::int64_t;

struct RankBuffers {
  std::vector<Value> send, recv, scratch;
};

// One run of `coll` on n = nodes x local ranks, numbered node by node.
class Model {
 public:
  Model(Collective coll, int nodes, int local, std::size_t count, bool in_place, bool avg = false)
      : coll_(coll), nodes_(nodes), local_(local), count_(count), in_place_(in_place), avg_(avg) {
    const int n = nodes * local;
    const std::size_t out = coll == Collective::allgather ? count * static_cast<std::size_t>(n) : count;
    for (int r = 0; r < n; ++r) {
      RankBuffers b;
      b.recv.assign(out, -1);
      b.scratch.assign(scratch_elements(coll, count, shape(r)), -2);
      std::vector<Value> input(count);
      for (std::size_t i = 0; i < count; ++i) input[i] = 1000 * (r + 1) + static_cast<Value>(i) * 7;
      if (in_place) std::copy(input.begin(), input.end(), b.recv.begin() + static_cast<std::ptrdiff_t>(send_base(r)));
      else b.send = input;
      inputs_.push_back(input);
      ranks_.push_back(b);
    }
  }

  Shape shape(int r) const { return {nodes_, local_, r / local_, r % local_}; }

  void run() {
    const int n = nodes_ * local_;
    std::vector<std::vector<Step>> plans;
    for (int r = 0; r < n; ++r) plans.push_back(plan(coll_, count_, shape(r)));
    for (int r = 1; r < n; ++r) ASSERT_EQ(plans[r].size(), plans[0].size());
    for (std::size_t s = 0; s < plans[0].size(); ++s) {
      for (int r = 0; r < n; ++r) {
        const Step& a = plans[0][s];
        const Step& b = plans[static_cast<std::size_t>(r)][s];
        ASSERT_TRUE(a.kind == b.kind && a.level == b.level && a.coll == b.coll && a.count == b.count);
      }
      if (plans[0][s].kind == Step::Kind::copy) {
        for (int r = 0; r < n; ++r) copy(r, plans[static_cast<std::size_t>(r)][s]);
      } else {
        run_ring(plans, s);
      }
    }
  }

  void expect_result() const {
    const int n = nodes_ * local_;
    for (int r = 0; r < n; ++r) {
      const RankBuffers& b = ranks_[static_cast<std::size_t>(r)];
      if (!in_place_) {
        EXPECT_EQ(b.send, inputs_[static_cast<std::size_t>(r)]) << "rank " << r << " send changed";
      }
      for (std::size_t i = 0; i < b.recv.size(); ++i) {
        Value want = 0;
        if (coll_ == Collective::allgather) {
          want = inputs_[i / count_][i % count_];
        } else {
          for (const auto& in : inputs_) want += in[i];
          if (avg_) want /= nodes_ * local_;
        }
        ASSERT_EQ(b.recv[i], want) << "rank " << r << " element " << i;
      }
    }
  }

 private:
  // In place, the harness's send buffer lies in recv: at 0 (all-reduce) or at the rank's block.
  std::size_t send_base(int r) const { return coll_ == Collective::allgather ? static_cast<std::size_t>(r) * count_ : 0; }

  // Elements [offset, offset + len) of a region of rank r, checked against its buffer.
  Value* at(int r, Region g, std::size_t len) {
    RankBuffers& b = ranks_[static_cast<std::size_t>(r)];
    std::vector<Value>* v = g.buffer == Buffer::recv ? &b.recv : g.buffer == Buffer::scratch ? &b.scratch : &b.send;
    std::size_t off = g.offset;
    if (g.buffer == Buffer::send && in_place_) {
      v = &b.recv;
      off += send_base(r);
    }
    if (off + len > v->size()) throw std::out_of_range("region outside its buffer");
    return v->data() + off;
  }

  void copy(int r, const Step& s) {
    if (s.height == 0) return;
    const std::size_t src_len = (s.height - 1) * s.src_pitch + s.width, dst_len = (s.height - 1) * s.dst_pitch + s.width;
    const Value* from = at(r, s.from, src_len);
    Value* to = at(r, s.to, dst_len);
    if (from == to && s.height == 1) return;  // a copy onto itself: nothing to do (and the GPU skips it)
    for (std::size_t h = 0; h < s.height; ++h)
      for (std::size_t i = 0; i < s.width; ++i) to[h * s.dst_pitch + i] = from[h * s.src_pitch + i];
  }

  // The members of rank r's ring on `level`, in communicator order.
  std::vector<int> members(int r, Level level) const {
    std::vector<int> m;
    const Shape me = shape(r);
    if (level == Level::node)
      for (int j = 0; j < local_; ++j) m.push_back(me.node * local_ + j);
    else
      for (int k = 0; k < nodes_; ++k) m.push_back(k * local_ + me.local);
    return m;
  }

  void run_ring(const std::vector<std::vector<Step>>& plans, std::size_t s) {
    const int n = nodes_ * local_;
    std::vector<bool> done(static_cast<std::size_t>(n), false);
    for (int r = 0; r < n; ++r) {
      if (done[static_cast<std::size_t>(r)]) continue;
      const std::vector<int> ring = members(r, plans[0][s].level);
      for (int m : ring) done[static_cast<std::size_t>(m)] = true;
      ring_collective(plans, s, ring);
    }
  }

  // One ring collective over `ring`: read every input, then write every output.
  void ring_collective(const std::vector<std::vector<Step>>& plans, std::size_t s, const std::vector<int>& ring) {
    const Step& st = plans[0][s];
    const std::size_t g = ring.size(), c = st.count;
    const std::size_t in_len = st.coll == Collective::reducescatter ? g * c : c;
    const std::size_t out_len = st.coll == Collective::allgather ? g * c : c;
    std::vector<std::vector<Value>> outs(g, std::vector<Value>(out_len, 0));
    for (std::size_t p = 0; p < g; ++p) {
      const Step& mine = plans[static_cast<std::size_t>(ring[p])][s];
      const Value* in = at(ring[p], mine.from, in_len);
      const Value* out = at(ring[p], mine.to, out_len);
      check_aliasing(st.coll, in, in_len, out, out_len, p * c);
      for (std::size_t q = 0; q < g; ++q)
        for (std::size_t i = 0; i < c; ++i) {
          if (st.coll == Collective::allreduce) outs[q][i] += in[i];
          else if (st.coll == Collective::reducescatter) outs[q][i] += in[q * c + i];
          else outs[q][p * c + i] = in[i];
        }
    }
    // avg: the ring divides its finished sums by its ranks, the ring across by the run's ranks.
    const Value divisor = st.level == Level::across ? nodes_ * local_ : local_;
    if (avg_ && !st.partial && st.coll != Collective::allgather)
      for (auto& o : outs)
        for (Value& v : o) v /= divisor;
    for (std::size_t p = 0; p < g; ++p) {
      Value* out = at(ring[p], plans[static_cast<std::size_t>(ring[p])][s].to, out_len);
      std::copy(outs[p].begin(), outs[p].end(), out);
    }
  }

  // Disjoint, or the in-place form: all-reduce in == out, reduce-scatter out == in + pos * c,
  // all-gather in == out + pos * c.
  static void check_aliasing(Collective coll, const Value* in, std::size_t in_len, const Value* out,
                             std::size_t out_len, std::size_t block) {
    if (in + in_len <= out || out + out_len <= in) return;
    if (coll == Collective::allreduce) EXPECT_EQ(in, out);
    else if (coll == Collective::reducescatter) EXPECT_EQ(out, in + block);
    else EXPECT_EQ(in, out + block);
  }

  Collective coll_;
  int nodes_, local_;
  std::size_t count_;
  bool in_place_;
  bool avg_;
  std::vector<RankBuffers> ranks_;
  std::vector<std::vector<Value>> inputs_;
};

TEST(HierPlan, EveryCountOnEveryShapeGivesTheExactResult) {
  const int shapes[][2] = {{1, 1}, {1, 2}, {1, 3}, {2, 1}, {3, 1}, {2, 2}, {2, 3}, {3, 2}, {2, 4}, {4, 4}};
  for (Collective coll : {Collective::allreduce, Collective::allgather})
    for (const auto& sh : shapes)
      for (std::size_t count = 0; count <= static_cast<std::size_t>(3 * sh[0] * sh[1] + 2); ++count)
        for (bool in_place : {false, true})
          for (bool avg : {false, true}) {
            if (avg && coll == Collective::allgather) continue;
            SCOPED_TRACE(testing::Message() << name(coll) << " " << sh[0] << " nodes x " << sh[1] << " count "
                                            << count << (in_place ? " in place" : "") << (avg ? " avg" : ""));
            Model m(coll, sh[0], sh[1], count, in_place, avg);
            m.run();
            m.expect_result();
          }
}

TEST(HierPlan, AllReduceStepsFollowTheModel) {
  // 2 nodes x 2, 9 elements: shares of 4, one element left over.
  const std::vector<Step> p = plan(Collective::allreduce, 9, {2, 2, 1, 1});
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].coll, Collective::reducescatter);
  EXPECT_EQ(p[0].level, Level::node);
  EXPECT_EQ(p[0].count, 4u);
  EXPECT_EQ(p[0].to.offset, 4u);  // local rank 1's share
  EXPECT_TRUE(p[0].partial);      // avg divides across the nodes, not here
  EXPECT_EQ(p[1].coll, Collective::allreduce);
  EXPECT_EQ(p[1].level, Level::across);
  EXPECT_EQ(p[2].coll, Collective::allgather);
  EXPECT_EQ(p[3].count, 1u);
  EXPECT_EQ(p[3].from.offset, 8u);
  EXPECT_EQ(p[4].level, Level::across);
  EXPECT_FALSE(p[4].partial);
  EXPECT_FALSE(plan(Collective::allreduce, 8, {1, 2, 0, 0})[0].partial);  // one node: the node divides
  // One node: the node's steps only; one rank per node: one ring across; one rank: a copy.
  EXPECT_EQ(plan(Collective::allreduce, 8, {1, 2, 0, 0}).size(), 2u);
  const auto across = plan(Collective::allreduce, 8, {4, 1, 2, 0});
  ASSERT_EQ(across.size(), 1u);
  EXPECT_EQ(across[0].level, Level::across);
  EXPECT_EQ(plan(Collective::allreduce, 8, {1, 1, 0, 0})[0].kind, Step::Kind::copy);
}

TEST(HierPlan, AllGatherCrossesNodesFirstAndReordersOnce) {
  const std::vector<Step> p = plan(Collective::allgather, 5, {2, 3, 0, 2});
  ASSERT_EQ(p.size(), 5u);  // across, node, one strided copy per local rank
  EXPECT_EQ(p[0].level, Level::across);
  EXPECT_EQ(p[0].count, 5u);
  EXPECT_EQ(p[1].level, Level::node);
  EXPECT_EQ(p[1].count, 10u);  // N blocks per local rank
  EXPECT_EQ(p[4].height, 2u);
  EXPECT_EQ(p[4].dst_pitch, 15u);
  EXPECT_EQ(scratch_elements(Collective::allgather, 5, {2, 3, 0, 2}), 30u);
  EXPECT_EQ(scratch_elements(Collective::allreduce, 5, {2, 3, 0, 2}), 0u);
  EXPECT_EQ(scratch_elements(Collective::allgather, 5, {1, 3, 0, 2}), 0u);
}

TEST(HierPlan, LevelsAndProblemsFromTheLayout) {
  RankLayout l = RankLayout::from_hosts(3, {"h", "h", "h", "h", "h", "h"});
  l.emulate_nodes(2);  // nodes {0,1,2} and {3,4,5}
  EXPECT_EQ(level_members(l, Level::node), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(level_members(l, Level::across), (std::vector<int>{0, 3}));
  EXPECT_EQ(color_of(l, Level::node), 1);
  EXPECT_EQ(color_of(l, Level::across), 0);
  const Shape s = shape_of(l);
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.local_ranks, 3);
  EXPECT_EQ(s.node, 1);
  EXPECT_EQ(s.local, 0);
  EXPECT_FALSE(layout_problem(l, Collective::allgather));
  // A level's layout keeps every rank's GPU choice (its rank among the ranks of its host).
  const RankLayout across = l.subset(level_members(l, Level::across));
  EXPECT_EQ(across.rank, 1);
  EXPECT_EQ(across.nodes, 2);
  EXPECT_EQ(across.host_local_rank(0), 0);
  EXPECT_EQ(across.host_local_rank(1), 3);

  RankLayout uneven = RankLayout::from_hosts(0, {"h", "h", "h"});
  uneven.emulate_nodes(2);  // 2 + 1
  EXPECT_EQ(layout_problem(uneven, Collective::allreduce).value_or(""),
            "hier needs the same number of ranks on every node (ranks per node here: 2, 1)");

  // Ranks dealt round-robin over two hosts: all-reduce runs, all-gather needs node-by-node numbering.
  const RankLayout rr = RankLayout::from_hosts(0, {"a", "b", "a", "b"});
  EXPECT_FALSE(layout_problem(rr, Collective::allreduce));
  EXPECT_EQ(layout_problem(rr, Collective::allgather).value_or(""),
            "hier all-gather needs the ranks numbered node by node (rank 1 is rank 0 of node 1)");
}

TEST(HierPlan, ListRingOrderKeepsItsOrderOnEachLevel) {
  RingOrderChoice list;
  list.kind = RingOrderKind::list;
  list.list = {0, 2, 3, 1};
  list.text = "0,2,3,1";
  EXPECT_EQ(level_ring_order(list, {2, 3}).list, (std::vector<int>{0, 1}));
  EXPECT_EQ(level_ring_order(list, {1, 3}).list, (std::vector<int>{1, 0}));
  RingOrderChoice topo;
  topo.kind = RingOrderKind::topo;
  EXPECT_EQ(level_ring_order(topo, {1, 3}).kind, RingOrderKind::topo);
}

}  // namespace
}  // namespace ccbench::hier
