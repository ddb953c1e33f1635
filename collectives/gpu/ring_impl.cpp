// ring: all-reduce, all-gather, reduce-scatter and reduce (a chain toward the root) over FIFO
// connections, one block per channel. The ring is ImplContext::ring_order's list: each rank
// connects to the ranks next to it there.
#include <fmt/format.h>

#include "transports/gpu_mesh.h"
#include "collectives/gpu/gpu_impl.h"
#include "collectives/gpu/gpu_impls.h"
#include "collectives/gpu/knobs.h"

namespace ccbench {

namespace {

using namespace gpu;

class RingGpu final : public GpuImpl {
 public:
  explicit RingGpu(int avg_divisor) : GpuImpl("ring"), avg_divisor_(avg_divisor) {}
  CollectiveSet collectives() const override {
    return {Collective::allreduce, Collective::allgather, Collective::reducescatter, Collective::reduce};
  }
  bool direct_access(const CaseSpec&) const override { return false; }
  void setup_kernels() override {
    channels_ = std::min(ring_channels(), resident_limit(ctx_.cuda_device, 1));
    if (paths_.label != "p2p") channels_ = std::min(channels_, host_channels());
    if (over_net()) channels_ = std::min(channels_, net_channels());
    slot_ = over_net() ? net_slot_bytes() : slot_bytes();
    if (n_ == 1) return;
    steps_ = std::make_unique<DeviceCounters>(2 * static_cast<std::size_t>(channels_));
    mesh_ = std::make_unique<GpuFifoMesh>(ctx_.comm, paths_, channels_, slot_, steps_->at(0));
    std::vector<SendConn> s;
    std::vector<RecvConn> r;
    order_ = ring_order(ctx_.ring_order, layout());
    pos_ = ring_position(order_, rank_);
    ring_ranks_ = DeviceArray<int>(order_);
    const int next = order_[static_cast<std::size_t>((pos_ + 1) % n_)];
    const int prev = order_[static_cast<std::size_t>((pos_ + n_ - 1) % n_)];
    for (int c = 0; c < channels_; ++c) {
      s.push_back(mesh_->send(next, c, c));
      r.push_back(mesh_->recv(prev, c, c));
    }
    mesh_->finish(layout(), ctx_.timeout);
    send_ = DeviceArray<SendConn>(s);
    recv_ = DeviceArray<RecvConn>(r);
  }
  void check_connections() override {
    if (mesh_) mesh_->check();
  }
  void run(const CallArgs& a) override {
    if (n_ == 1) return copy_alone(a);
    RingParams p{};
    p.kind = ring_kind(a.spec.coll);
    p.dtype = a.spec.dtype;
    p.op = a.spec.op;
    p.nranks = n_;
    p.avg_divisor = avg_divisor_ > 0 ? avg_divisor_ : n_;
    p.pos = pos_;
    p.root_pos = a.spec.coll == Collective::reduce ? ring_position(order_, a.spec.root) : 0;
    p.ring_ranks = ring_ranks_.get();
    p.channels = channels_for(a);
    p.send = a.send;
    p.recv = a.recv;
    p.count = a.count;
    p.slot_bytes = slot_;
    p.send_conns = send_.get();
    p.recv_conns = recv_.get();
    p.limits = limits();
    launched(launch_ring(p, stream_));
  }
  std::string describe(const CallArgs& a) override {
    if (n_ == 1) return "copy (1 rank)";
    return fmt::format("{} {}ch", a.spec.coll == Collective::reduce ? "ring-chain" : "ring", channels_for(a));
  }

 private:
  static RingKind ring_kind(Collective c) {
    switch (c) {
      case Collective::allgather: return RingKind::allgather;
      case Collective::reducescatter: return RingKind::reducescatter;
      case Collective::reduce: return RingKind::reduce;
      default: return RingKind::allreduce;  // run() is only given the collectives() above
    }
  }
  // Small messages use fewer channels: fewer, fuller slots. Same choice on every rank. All-gather
  // and reduce-scatter count their n blocks, all-reduce and reduce one rank's input.
  int channels_for(const CallArgs& a) const {
    const bool blocks = a.spec.coll == Collective::allgather || a.spec.coll == Collective::reducescatter;
    const std::size_t bytes = a.count * element_size(a.spec.dtype) * (blocks ? static_cast<std::size_t>(n_) : 1);
    return blocks_for(bytes, kRingBytesPerChannel, channels_);
  }
  int avg_divisor_ = 0;  // 0: the ring's own ranks
  int channels_ = kDefaultRingChannels;
  std::size_t slot_ = 0;
  std::unique_ptr<DeviceCounters> steps_;
  std::unique_ptr<GpuFifoMesh> mesh_;
  DeviceArray<SendConn> send_;
  DeviceArray<RecvConn> recv_;
  std::vector<int> order_;      // the ring: the rank at every position
  int pos_ = 0;                 // this rank's position on the ring
  DeviceArray<int> ring_ranks_;  // the ring, for the kernels
};

}  // namespace

std::unique_ptr<Implementation> make_ring_gpu() { return std::make_unique<RingGpu>(0); }
std::unique_ptr<Implementation> make_ring_gpu_avg_over(int avg_divisor) {
  return std::make_unique<RingGpu>(avg_divisor);
}

}  // namespace ccbench
