// tree: double binary tree all-reduce over FIFO connections, and the log-depth (Bruck)
// all-gather with direct writes into peer memory.
#include <fmt/format.h>

#include "collectives/gpu/gpu_impl.h"
#include "collectives/gpu/gpu_impls.h"
#include "collectives/gpu/knobs.h"
#include "collectives/gpu/peer_state.h"
#include "collectives/schedules/tree.h"
#include "core/error.h"
#include "transports/gpu/gpu_mesh.h"

namespace ccbench {

namespace {

using namespace gpu;

// The FIFO connections of both trees, indexed [tree][channel] (x2 children where there are two).
struct TreeConns {
  std::vector<SendConn> up_send, down_send;
  std::vector<RecvConn> up_recv, down_recv;
};

class TreeGpu final : public GpuImpl {
 public:
  TreeGpu() : GpuImpl(ImplId::tree) {}
  // allreduce: the double binary tree; allgather: Bruck.
  CollectiveSet collectives() const override { return {Collective::allreduce, Collective::allgather}; }
  // The Bruck all-gather writes peer outputs directly; the tree all-reduce uses FIFOs.
  bool direct_access(const CaseSpec& s) const override { return s.coll == Collective::allgather; }
  std::optional<std::string> unsupported(const CaseSpec& s, const ImplContext& ctx) const override {
    if (s.coll == Collective::allreduce && ctx.tree != schedule::TreeShape::double_binary)
      return std::string("--tree binary: the GPU tree all-reduce runs the double binary tree only (--tree double)");
    return GpuImpl::unsupported(s, ctx);
  }
  void setup_kernels() override {
    channels_ = std::min(tree_channels(), resident_limit(4));
    // Over host memory: 6 FIFOs per channel, so a quarter of the ring's host channels.
    if (!paths_.only(Transport::p2p)) channels_ = std::min(channels_, std::max(1, host_channels() / 4));
    if (over_net()) channels_ = std::min(channels_, net_tree_channels_of(net_channels()));
    slot_ = over_net() ? net_slot_bytes() : slot_bytes();
    if (n_ == 1) return;
    steps_ = std::make_unique<DeviceCounters>(2 * 6 * static_cast<std::size_t>(channels_));
    mesh_ = std::make_unique<GpuFifoMesh>(ctx_.comm, paths_, 6 * channels_, slot_, steps_->at(0));
    const TreeConns conns = connect_trees();
    mesh_->finish(layout(), ctx_.timeout);
    transport_label_ = mesh_->transport_label(paths_);
    up_send_ = DeviceArray<SendConn>(conns.up_send);
    up_recv_ = DeviceArray<RecvConn>(conns.up_recv);
    down_send_ = DeviceArray<SendConn>(conns.down_send);
    down_recv_ = DeviceArray<RecvConn>(conns.down_recv);
  }
  void check_connections() override {
    if (mesh_) mesh_->check();
  }
  // The Bruck all-gather writes into the outputs of its rounds' peers (schedule::bruck_peers): only
  // an all-gather series maps them (the all-reduce moves its data through the FIFOs of its
  // parents and children), and only those log2(n) ranks, never every rank of the node.
  void attach(const BufferSet& b) override {
    if (b.coll != Collective::allgather || !paths_.only(Transport::p2p) || n_ == 1) return;
    if (!peers_) peers_ = std::make_unique<PeerState>(ctx_.comm, kLowLatencyOffset, schedule::bruck_peers(n_, rank_));
    peers_->attach(b, false, true);
  }
  void detach() override {
    if (peers_) peers_->detach();
  }
  void run(const CallArgs& a) override {
    if (n_ == 1) return copy_alone(a);
    if (a.spec.coll == Collective::allgather) {
      if (!peers_) fail(ExitCode::runtime, "tree: an all-gather runs on buffers attached for an all-gather series");
      launched(launch_bruck_allgather(peers_->params(a, rank_, n_, bruck_blocks(a), limits()), stream_));
      return;
    }
    TreeParams p{};
    p.dtype = a.spec.dtype;
    p.op = a.spec.op;
    p.nranks = n_;
    p.channels = channels_;
    p.send = a.send;
    p.recv = a.recv;
    p.count = a.count;
    p.slot_bytes = slot_;
    for (int t = 0; t < 2; ++t) {
      p.parent[t] = parent_[t];
      p.nchildren[t] = nchildren_[t];
    }
    p.up_send = up_send_.get();
    p.up_recv = up_recv_.get();
    p.down_send = down_send_.get();
    p.down_recv = down_recv_.get();
    p.limits = limits();
    launched(launch_tree(p, stream_));
  }
  std::string describe(const CallArgs& a) override {
    if (n_ == 1) return "copy (1 rank)";
    if (a.spec.coll == Collective::allgather) return fmt::format("bruck {}blk", bruck_blocks(a));
    return fmt::format("double tree 2x{}ch{}", channels_, mesh_->staging_note());
  }

 private:
  int bruck_blocks(const CallArgs& a) const {
    return blocks_for(a.count * element_size(a.spec.dtype), kBruckBytesPerBlock,
                      std::min(kBruckMaxBlocks, resident_limit(1)));
  }
  // FIFO ids: each (tree, channel) has 3 incoming FIFOs (2 from children, 1 from the parent) and
  // 3 outgoing heads (1 to the parent, 2 to children). Same numbering on every rank.
  int in_up(int t, int c, int k) const { return (t * channels_ + c) * 3 + k; }
  int in_down(int t, int c) const { return (t * channels_ + c) * 3 + 2; }
  int out_up(int t, int c) const { return (t * channels_ + c) * 3; }
  int out_down(int t, int c, int k) const { return (t * channels_ + c) * 3 + 1 + k; }
  // Which child (link index) `child` is of `parent` in tree t.
  int child_index(int t, int parent, int child) const {
    return schedule::double_tree(n_, parent, t).child[0] == child ? 0 : 1;
  }
  TreeConns connect_trees() {
    const int C = channels_;
    TreeConns x{std::vector<SendConn>(2 * C), std::vector<SendConn>(4 * C), std::vector<RecvConn>(4 * C),
                std::vector<RecvConn>(2 * C)};
    for (int t = 0; t < 2; ++t) {
      const schedule::TreeLinks l = schedule::double_tree(n_, rank_, t);
      parent_[t] = l.parent;
      int kids[2] = {-1, -1};
      int nc = 0;
      for (int k = 0; k < 2; ++k)
        if (l.child[k] >= 0) kids[nc++] = l.child[k];
      nchildren_[t] = nc;
      for (int c = 0; c < C; ++c) {
        const int tc = t * C + c;
        if (l.parent >= 0) {
          const int k = child_index(t, l.parent, rank_);
          x.up_send[tc] = mesh_->send(l.parent, in_up(t, c, k), out_up(t, c));
          x.down_recv[tc] = mesh_->recv(l.parent, in_down(t, c), out_down(t, c, k));
        }
        // The kernel's child j is the j-th present child; its FIFO index at us is its link index.
        for (int j = 0; j < nc; ++j) {
          const int link = child_index(t, rank_, kids[j]);
          x.up_recv[tc * 2 + j] = mesh_->recv(kids[j], in_up(t, c, link), out_up(t, c));
          x.down_send[tc * 2 + j] = mesh_->send(kids[j], in_down(t, c), out_down(t, c, link));
        }
      }
    }
    return x;
  }
  int channels_ = knob_default<int>(Knob::gpu_tree_channels);
  std::size_t slot_ = 0;
  int parent_[2] = {-1, -1}, nchildren_[2] = {0, 0};
  std::unique_ptr<DeviceCounters> steps_;
  std::unique_ptr<GpuFifoMesh> mesh_;
  DeviceArray<SendConn> up_send_, down_send_;
  DeviceArray<RecvConn> up_recv_, down_recv_;
  std::unique_ptr<PeerState> peers_;
};

}  // namespace

std::unique_ptr<Implementation> make_tree_gpu() { return std::make_unique<TreeGpu>(); }

}  // namespace ccbench
