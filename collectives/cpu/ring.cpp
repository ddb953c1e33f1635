// `ring` on CPU ranks: NCCL's ring algorithms over CPU channels, driven by the schedules of
// collectives/schedules/ring.h. The ring is a list of ranks (ImplContext::ring_order, rank order by
// default): the schedules work on positions on that list, and the list turns a position into the
// rank whose block it is. Every step moves one slot-sized piece in one pass over the data:
// e.g. recv_reduce_send reads the received slot and my input and writes straight into the next
// rank's slot. Piece sizes come from the same pure functions on both sides of a channel, so an
// empty piece is skipped by sender and receiver alike.
#include <algorithm>

#include <fmt/format.h>

#include "collectives/cpu/cpu_common.h"
#include "collectives/cpu/cpu_impls.h"
#include "collectives/cpu/executor.h"
#include "collectives/cpu/ring_flow.h"
#include "collectives/schedules/ring.h"
#include "core/error.h"
#include "topologies/ring_order.h"

namespace ccbench {

namespace {

using cpu::RingFlow;
using cpu::RingPeers;

class RingCpu final : public cpu::CpuImplementation {
 public:
  RingCpu() : CpuImplementation(ImplId::ring) {}
  CollectiveSet collectives() const override {
    return {Collective::allreduce, Collective::allgather, Collective::reducescatter,
            Collective::broadcast, Collective::sendrecv,  Collective::reduce};
  }
  // sendrecv is nccl-tests' pattern (rank r receives from rank r - 1), not a ring collective: it
  // runs over the ring's channels only while the ring is in rank order.
  std::optional<std::string> unsupported(const CaseSpec& spec, const ImplContext& ctx) const override {
    if (auto why = CpuImplementation::unsupported(spec, ctx)) return why;
    if (spec.coll == Collective::sendrecv && ctx.layout && !is_rank_order(ring_order(ctx.ring_order, *ctx.layout)))
      return fmt::format("sendrecv sends to rank + 1, which is not a neighbour on --ring-order {}",
                         ctx.ring_order.text);
    return std::nullopt;
  }
  void setup(const ImplContext& ctx) override {
    if (!begin_setup(ctx)) return;  // unsupported() skips every case, with the reason
    order_ = ring_order(ctx.ring_order, *ctx.layout);
    const int n = n_, pos = ring_position(order_, rank_);
    peers_ = {rank_,
              n,
              order_[static_cast<size_t>((pos + 1) % n)],
              order_[static_cast<size_t>((pos + n - 1) % n)],
              pos,
              &order_,
              nullptr,
              nullptr};
    std::vector<ChannelRequest> req;
    if (n > 1) req = {{peers_.next, 0, true}, {peers_.prev, 0, false}};
    channels_ = connect_channels(ctx.comm, *ctx.layout, req, cpu::channel_options(ctx, cfg_));
    if (n > 1) {
      peers_.to_next = &channels_->send(0);
      peers_.from_prev = &channels_->recv(1);
    }
  }

  std::optional<RingNeighbours> ring_neighbours() const override {
    if (!channels_) return std::nullopt;
    return RingNeighbours{peers_.prev, peers_.next};
  }

  void run(const CallArgs& a) override {
    check_runnable(a);
    const Collective coll = a.spec.coll;
    if (peers_.n == 1) return cpu::run_single_rank(a);
    const ReduceKernels k(a.spec.dtype, has_reduce_op(coll) ? a.spec.op : ReduceOp::none, peers_.n);
    const size_t slice = cpu::slice_elements(cfg_, k.element_bytes());
    if (coll == Collective::sendrecv) {
      if (a.send == a.recv) fail(ExitCode::usage, "sendrecv/ring has no in-place form");
      StreamFlow out = StreamFlow::sending(k, a.send, a.count, slice, peers_.to_next, peers_.next, "sendrecv send");
      StreamFlow in =
          StreamFlow::receiving(k, a.recv, a.count, slice, peers_.from_prev, peers_.prev, "sendrecv receive");
      DrainFlow drain({peers_.to_next}, {peers_.next}, {&out});
      Flow* flows[] = {&out, &in, &drain};
      return run_flows(flows, timeout_, peers_.rank, over_transport("sendrecv/ring"));
    }
    RingFlow ring(k, a, peers_, slice);
    DrainFlow drain({peers_.to_next}, {peers_.next}, {&ring});
    Flow* flows[] = {&ring, &drain};
    run_flows(flows, timeout_, peers_.rank, over_transport(what(coll)));
  }

 private:
  static std::string what(Collective c) { return fmt::format("{}/ring", name(c)); }

  std::vector<int> order_;
  RingPeers peers_{};
};

}  // namespace

std::unique_ptr<Implementation> make_ring_cpu() { return std::make_unique<RingCpu>(); }

}  // namespace ccbench
