// `direct` on CPU ranks: every rank has a channel to and from every other rank, and a collective
// is a set of independent streams, one per peer and direction, that progress together in the
// progress engine (pairwise exchange, as NCCL runs all-to-all, gather and scatter with grouped
// ncclSend/ncclRecv). A rank's own block is copied locally.
//   alltoall, alltoallv  block p of my input to rank p; block p of my output from rank p
//   gather               every rank's input to block `rank` of the root's output
//   scatter              block p of the root's input to rank p's output
#include <cstring>

#include <fmt/format.h>

#include "collectives/cpu/cpu_common.h"
#include "collectives/cpu/cpu_impls.h"
#include "collectives/cpu/executor.h"
#include "core/error.h"

namespace ccbench {

namespace {

// One channel each way per pair of ranks: a single tag is enough.
constexpr int kDirectTag = 0;

// Where block p of a rank's send and receive buffers lies, in elements.
struct Block {
  size_t offset = 0, count = 0;
};

class DirectCpu final : public cpu::CpuImplementation {
 public:
  DirectCpu() : CpuImplementation(ImplId::direct) {}
  CollectiveSet collectives() const override {
    return {Collective::alltoall, Collective::alltoallv, Collective::gather, Collective::scatter};
  }

  void setup(const ImplContext& ctx) override {
    if (!begin_setup(ctx)) return;  // unsupported() skips every case, with the reason
    // Request order: per peer in rank order, a send channel then a receive channel.
    std::vector<ChannelRequest> req;
    for (int p = 0; p < n_; ++p)
      if (p != rank_) {
        req.push_back({p, kDirectTag, true});
        req.push_back({p, kDirectTag, false});
      }
    channels_ = connect_channels(ctx.comm, *ctx.layout, req, cpu::channel_options(ctx, cfg_));
    to_.assign(static_cast<size_t>(n_), nullptr);
    from_.assign(static_cast<size_t>(n_), nullptr);
    for (size_t i = 0; i < req.size(); i += 2) {
      to_[static_cast<size_t>(req[i].peer)] = &channels_->send(i);
      from_[static_cast<size_t>(req[i].peer)] = &channels_->recv(i + 1);
    }
  }

  void run(const CallArgs& a) override {
    check_runnable(a);
    const ReduceKernels k(a.spec.dtype, ReduceOp::none, n_);
    const size_t slice = cpu::slice_elements(cfg_, k.element_bytes());
    const Collective c = a.spec.coll;
    // Whether this rank sends to / receives from rank p: every pair in all-to-all; in gather and
    // scatter only the pairs with the root, in the collective's direction.
    auto sends_to = [&](int p) { return moves_block(c, rank_, p, a.spec.root); };
    auto receives_from = [&](int p) { return moves_block(c, p, rank_, a.spec.root); };
    std::vector<StreamFlow> streams;
    streams.reserve(2 * static_cast<size_t>(n_));
    std::vector<SendChannel*> drained;
    std::vector<int> drained_peers;
    const std::string what = fmt::format("{}/direct", name(c));
    for (int p = 0; p < n_; ++p) {
      if (p == rank_) {
        copy_own_block(a, k.element_bytes());
        continue;
      }
      const Block out = send_block(a, rank_, p), in = recv_block(a, rank_, p);
      if (sends_to(p) && out.count) {
        streams.push_back(StreamFlow::sending(k, at(a.send, out.offset, k), out.count, slice, to_[p], p,
                                              fmt::format("{} send to rank {}", what, p)));
        drained.push_back(to_[p]);
        drained_peers.push_back(p);
      }
      if (receives_from(p) && in.count)
        streams.push_back(StreamFlow::receiving(k, at(a.recv, in.offset, k), in.count, slice, from_[p], p,
                                                fmt::format("{} receive from rank {}", what, p)));
    }
    if (streams.empty()) return;  // one rank, or nothing to exchange
    std::vector<Flow*> flows;
    for (StreamFlow& s : streams) flows.push_back(&s);
    DrainFlow drain(drained, drained_peers, std::vector<const Flow*>(flows.begin(), flows.end()));
    flows.push_back(&drain);
    run_flows(flows, timeout_, rank_, over_transport(what));
  }

 private:
  static char* at(void* base, size_t elements, const ReduceKernels& k) {
    return static_cast<char*>(base) + elements * k.element_bytes();
  }
  static const char* at(const void* base, size_t elements, const ReduceKernels& k) {
    return static_cast<const char*>(base) + elements * k.element_bytes();
  }

  // The block that rank `from` sends to rank `to`: where it lies in the sender's send buffer
  // (`in_send`) or in the receiver's receive buffer.
  Block block(const CallArgs& a, int from, int to, bool in_send) const {
    const PeerBlock b = peer_block(a.spec.coll, from, to, n_, a.count);
    return {in_send ? b.send_offset : b.recv_offset, b.count};
  }
  Block send_block(const CallArgs& a, int from, int to) const { return block(a, from, to, true); }
  Block recv_block(const CallArgs& a, int to, int from) const { return block(a, from, to, false); }

  // My own block, where I both send and receive it (every rank in alltoall(v), the root of
  // gather and scatter): a local copy, none when in place puts it there already.
  void copy_own_block(const CallArgs& a, size_t esz) const {
    if (!moves_block(a.spec.coll, rank_, rank_, a.spec.root)) return;
    const Block out = send_block(a, rank_, rank_), in = recv_block(a, rank_, rank_);
    const char* src = static_cast<const char*>(a.send) + out.offset * esz;
    char* dst = static_cast<char*>(a.recv) + in.offset * esz;
    if (src != dst) std::memcpy(dst, src, out.count * esz);
  }

  std::vector<SendChannel*> to_;
  std::vector<RecvChannel*> from_;
};

}  // namespace

std::unique_ptr<Implementation> make_direct_cpu() { return std::make_unique<DirectCpu>(); }

}  // namespace ccbench
