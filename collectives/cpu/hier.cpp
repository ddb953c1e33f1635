// `hier` on CPU ranks: all-reduce in three stages over the nodes of the run (topologies/layout.h,
// emulated nodes included), each a pipelined ring flow (collectives/cpu/ring_flow.h):
//   1. within each node, a chain reduce to the node's leader (its first rank): shm;
//   2. across nodes, a ring all-reduce among the leaders: the inter-node transport (mpi, tcp);
//   3. within each node, a chain broadcast from the leader.
// Only the leaders cross node boundaries, so the inter-node links carry one ring instead of the
// flat ring's node-boundary crossings. avg divides once, by the ranks of the whole run, where the
// reduction completes (stage 2, or stage 1 on a single node).
#include <cstring>

#include "collectives/cpu/cpu_common.h"
#include "collectives/cpu/cpu_impls.h"
#include "collectives/cpu/ring_flow.h"

namespace ccbench {

namespace {

using cpu::RingFlow;
using cpu::RingPeers;

constexpr int kIntraTag = 0;  // the ring within a node
constexpr int kInterTag = 1;  // the ring of the leaders

// One ring over `members` (ranks in ring order, this rank among them) and the channel requests
// it needs (none for a ring of one).
struct SubRing {
  std::vector<int> positions;  // 0..m-1: RingFlow addresses members by position
  RingPeers peers{};
  size_t send_request = 0, recv_request = 0;

  void plan(const std::vector<int>& members, int rank, int tag, std::vector<ChannelRequest>& req) {
    const int m = static_cast<int>(members.size());
    positions.resize(members.size());
    for (int i = 0; i < m; ++i) positions[static_cast<size_t>(i)] = i;
    const int pos = ring_position(members, rank);
    peers = {rank,
             m,
             members[static_cast<size_t>((pos + 1) % m)],
             members[static_cast<size_t>((pos + m - 1) % m)],
             pos,
             &positions,
             nullptr,
             nullptr};
    if (m == 1) return;
    send_request = req.size();
    req.push_back({peers.next, tag, true});
    recv_request = req.size();
    req.push_back({peers.prev, tag, false});
  }
  void attach(ChannelSet& channels) {
    if (peers.n == 1) return;
    peers.to_next = &channels.send(send_request);
    peers.from_prev = &channels.recv(recv_request);
  }
};

class HierCpu final : public cpu::CpuImplementation {
 public:
  HierCpu() : CpuImplementation(ImplId::hier) {}
  CollectiveSet collectives() const override { return {Collective::allreduce}; }

  void setup(const ImplContext& ctx) override {
    if (!begin_setup(ctx)) return;  // unsupported() skips every case, with the reason
    const RankLayout& l = *ctx.layout;
    std::vector<int> node_ranks, leaders;
    for (int r = 0; r < n_; ++r) {
      if (l.node_of[static_cast<size_t>(r)] == l.node_of[static_cast<size_t>(rank_)]) node_ranks.push_back(r);
      if (l.local_rank_of[static_cast<size_t>(r)] == 0) leaders.push_back(r);
    }
    leader_ = node_ranks.front() == rank_;
    nodes_ = static_cast<int>(leaders.size());
    std::vector<ChannelRequest> req;
    intra_.plan(node_ranks, rank_, kIntraTag, req);
    if (leader_) inter_.plan(leaders, rank_, kInterTag, req);
    channels_ = connect_channels(ctx.comm, l, req, cpu::channel_options(ctx, cfg_));
    intra_.attach(*channels_);
    if (leader_) inter_.attach(*channels_);
  }

  void run(const CallArgs& a) override {
    check_runnable(a);
    if (n_ == 1) return cpu::run_single_rank(a);
    const size_t esz = element_size(a.spec.dtype);
    const size_t slice = cpu::slice_elements(cfg_, esz);
    // Stage 1: the node's sum at the leader (finalized there only when there is no stage 2).
    if (intra_.peers.n > 1) {
      const ReduceKernels k(a.spec.dtype, a.spec.op, nodes_ == 1 ? n_ : 1);
      run_stage(k, with(a, Collective::reduce, a.send), intra_.peers, slice);
    } else if (a.send != a.recv) {
      std::memcpy(a.recv, a.send, a.count * esz);
    }
    // Stage 2: the leaders' ring, in place on their outputs.
    if (leader_ && nodes_ > 1) {
      const ReduceKernels k(a.spec.dtype, a.spec.op, n_);
      run_stage(k, with(a, Collective::allreduce, a.recv), inter_.peers, slice);
    }
    // Stage 3: the result from the leader to the rest of the node.
    if (intra_.peers.n > 1) {
      const ReduceKernels k(a.spec.dtype, ReduceOp::none, intra_.peers.n);
      run_stage(k, with(a, Collective::broadcast, a.recv), intra_.peers, slice);
    }
  }

 private:
  // `a` as one stage: collective `c` rooted at position 0 (the leader), reading `in`.
  static CallArgs with(const CallArgs& a, Collective c, const void* in) {
    CallArgs s = a;
    s.spec.coll = c;
    s.spec.root = 0;
    s.send = in;
    return s;
  }
  void run_stage(const ReduceKernels& k, const CallArgs& stage, const RingPeers& peers, size_t slice) {
    RingFlow ring(k, stage, peers, slice);
    DrainFlow drain({peers.to_next}, {peers.next}, {&ring});
    Flow* flows[] = {&ring, &drain};
    run_flows(flows, timeout_, rank_, over_transport(fmt::format("allreduce/hier ({})", name(stage.spec.coll))));
  }

  SubRing intra_, inter_;
  bool leader_ = false;
  int nodes_ = 1;
};

}  // namespace

std::unique_ptr<Implementation> make_hier_cpu() { return std::make_unique<HierCpu>(); }

}  // namespace ccbench
