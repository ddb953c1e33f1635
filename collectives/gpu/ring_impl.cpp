// ring: all-reduce, all-gather, reduce-scatter and reduce (a chain toward the root) over FIFO
// connections, one block per channel. The ring is ImplContext::ring_order's list: each rank
// connects to the ranks next to it there.
#include <fmt/format.h>

#include "collectives/gpu/gpu_impl.h"
#include "collectives/gpu/gpu_impls.h"
#include "collectives/gpu/knobs.h"
#include "transports/gpu/gpu_mesh.h"

namespace ccbench {

namespace {

using namespace gpu;

class RingGpu final : public GpuImpl {
 public:
  explicit RingGpu(int avg_divisor) : GpuImpl(ImplId::ring), avg_divisor_(avg_divisor) {}
  CollectiveSet collectives() const override {
    return {Collective::allreduce, Collective::allgather, Collective::reducescatter, Collective::reduce};
  }
  bool direct_access(const CaseSpec&) const override { return false; }
  void setup_kernels() override {
    channels_ = std::min(ring_channels(), resident_limit(1));
    if (!paths_.only(Transport::p2p)) channels_ = std::min(channels_, host_channels());
    if (over_net()) channels_ = std::min(channels_, net_channels());
    slot_ = over_net() ? net_slot_bytes() : slot_bytes();
    if (n_ == 1) return;
    order_ = ring_order(ctx_.ring_order, layout());
    pos_ = ring_position(order_, rank_);
    ring_ranks_ = DeviceArray<int>(order_);
    neighbours_ = RingNeighbours{order_[static_cast<std::size_t>((pos_ + n_ - 1) % n_)],
                                 order_[static_cast<std::size_t>((pos_ + 1) % n_)]};
    // Over host with neither CCBENCH_GPU_HOST_RECV nor _SEND set: SM staging for small calls, the
    // copy engines for both halves from host_ce_min_bytes() (where every rank has its own GPU).
    // The conditions are the same on every rank, and agreed_host_copy is collective (agreed once
    // here: the mesh is given the outcome).
    const bool host = paths_.only(Transport::host);
    const std::optional<HostCopyModes> forced = host ? agreed_host_copy(ctx_.comm) : std::nullopt;
    const bool per_size = host && !forced && !gpus_shared(ctx_);
    sm_ = connect(host ? std::optional<HostCopyModes>(forced.value_or(HostCopyModes{})) : std::nullopt);
    transport_label_ = sm_.mesh->transport_label(paths_);
    if (per_size) {
      ce_ = connect(HostCopyModes{HostCopy::ce, HostCopy::ce});
      ce_min_bytes_ = host_ce_min_bytes();
    }
  }
  void check_connections() override {
    if (sm_.mesh) sm_.mesh->check();
    if (ce_.mesh) ce_.mesh->check();
  }
  std::optional<RingNeighbours> ring_neighbours() const override {
    if (!sm_.mesh) return std::nullopt;
    return neighbours_;
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
    const Ring& ring = ring_for(a);
    p.send_conns = ring.send.get();
    p.recv_conns = ring.recv.get();
    p.limits = limits();
    launched(launch_ring(p, stream_));
  }
  std::string describe(const CallArgs& a) override {
    if (n_ == 1) return "copy (1 rank)";
    return fmt::format("{}{} {}ch{}", name_, a.spec.coll == Collective::reduce ? "-chain" : "", channels_for(a),
                       ring_for(a).mesh->staging_note());
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
  // One set of ring connections: the FIFOs, their step counters, the kernels' view of them.
  struct Ring {
    std::unique_ptr<DeviceCounters> steps;
    std::unique_ptr<GpuFifoMesh> mesh;
    DeviceArray<SendConn> send;
    DeviceArray<RecvConn> recv;
  };
  // Collective: a channel per FIFO toward the next rank on the ring and from the previous one.
  Ring connect(std::optional<HostCopyModes> host_copy) {
    Ring ring;
    ring.steps = std::make_unique<DeviceCounters>(2 * static_cast<std::size_t>(channels_));
    ring.mesh = std::make_unique<GpuFifoMesh>(ctx_.comm, paths_, channels_, slot_, ring.steps->at(0), host_copy);
    std::vector<SendConn> s;
    std::vector<RecvConn> r;
    for (int c = 0; c < channels_; ++c) {
      s.push_back(ring.mesh->send(neighbours_.next, c, c));
      r.push_back(ring.mesh->recv(neighbours_.prev, c, c));
    }
    ring.mesh->finish(layout(), ctx_.timeout);
    ring.send = DeviceArray<SendConn>(s);
    ring.recv = DeviceArray<RecvConn>(r);
    return ring;
  }
  const Ring& ring_for(const CallArgs& a) const { return ce_.mesh && call_bytes(a) >= ce_min_bytes_ ? ce_ : sm_; }
  // A call's size as the choices here count it: all-gather and reduce-scatter their n blocks,
  // all-reduce and reduce one rank's input.
  std::size_t call_bytes(const CallArgs& a) const {
    const bool blocks = a.spec.coll == Collective::allgather || a.spec.coll == Collective::reducescatter;
    return a.count * element_size(a.spec.dtype) * (blocks ? static_cast<std::size_t>(n_) : 1);
  }
  // Small messages use fewer channels: fewer, fuller slots. Same choice on every rank.
  int channels_for(const CallArgs& a) const { return blocks_for(call_bytes(a), kRingBytesPerChannel, channels_); }
  int avg_divisor_ = 0;  // 0: the ring's own ranks
  int channels_ = knob_default<int>(Knob::gpu_channels);
  std::size_t slot_ = 0;
  Ring sm_, ce_;  // ce_: the copy-engine set over host, where sizes pick (else empty)
  std::size_t ce_min_bytes_ = 0;
  std::vector<int> order_;       // the ring: the rank at every position
  int pos_ = 0;                  // this rank's position on the ring
  RingNeighbours neighbours_;    // the ranks the channels connect: from prev, to next
  DeviceArray<int> ring_ranks_;  // the ring, for the kernels
};

}  // namespace

std::unique_ptr<Implementation> make_ring_gpu() { return std::make_unique<RingGpu>(0); }
std::unique_ptr<Implementation> make_ring_gpu_avg_over(int avg_divisor) {
  return std::make_unique<RingGpu>(avg_divisor);
}

}  // namespace ccbench
