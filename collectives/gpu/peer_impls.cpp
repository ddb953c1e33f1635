// oneshot and twoshot: kernels that address every rank's memory directly. oneshot: all-reduce
// (LL lines pushed to every peer) and reduce (the root reads every input); twoshot: all-reduce.
#include <fmt/format.h>

#include "collectives/gpu/gpu_impl.h"
#include "collectives/gpu/gpu_impls.h"
#include "collectives/gpu/knobs.h"
#include "collectives/gpu/peer_state.h"

namespace ccbench {

namespace {

using namespace gpu;

class OneshotGpu final : public GpuImpl {
 public:
  OneshotGpu() : GpuImpl(ImplId::oneshot) {}
  CollectiveSet collectives() const override { return {Collective::allreduce, Collective::reduce}; }
  // The all-reduce's LL buffers bound its size; reduce reads the inputs where they are.
  std::optional<std::string> unsupported_count(const CaseSpec& s, std::size_t count) const override {
    if (s.coll == Collective::reduce || count * element_size(s.dtype) <= oneshot_max_bytes()) return std::nullopt;
    return fmt::format("oneshot handles up to {} bytes per rank (CCBENCH_ONESHOT_MAX_BYTES)", oneshot_max_bytes());
  }
  bool direct_access(const CaseSpec&) const override { return true; }
  void setup_kernels() override {
    ll_blocks_ = std::min(kOneshotMaxBlocks, resident_limit(1));
    read_blocks_ = std::min(kDirectReduceMaxBlocks, resident_limit(1));
    ll_per_rank_ = oneshot_max_bytes() * 2;  // a 16-byte line carries 8 bytes
    peers_ = std::make_unique<PeerState>(ctx_.comm, kLowLatencyOffset + 2 * static_cast<std::size_t>(n_) * ll_per_rank_,
                                         other_ranks(ctx_.comm));
    read_epochs_ = std::make_unique<DeviceCounters>(kMaxChannels);
  }
  // Reduce reads every rank's input: in place it lies in the receive buffer.
  void attach(const BufferSet& b) override { peers_->attach(b, true, true); }
  void detach() override { peers_->detach(); }
  void run(const CallArgs& a) override {
    if (n_ == 1) return copy_alone(a);
    // No words, no launch: the LL parity alternates with every launch, and a rank may run at
    // most one call ahead of a peer only because each call waits for the peer's words. A launch
    // that waited for none would let a rank's next call write the parity its peer still reads
    // and clears. Zero elements is the same call on every rank, so every rank skips it alike.
    if (a.count == 0) return;
    PeerParams p = peers_->params(a, rank_, n_, blocks(a), limits());
    if (a.spec.coll == Collective::reduce) {
      p.epochs = read_epochs_->at(0);
      return launched(launch_direct_reduce(p, stream_));
    }
    p.ll_bytes_per_rank = ll_per_rank_;
    p.grid = ll_blocks_;  // every block counts every call (peer_kernels.cu)
    launched(launch_oneshot(p, stream_));
  }
  std::string describe(const CallArgs& a) override {
    if (n_ == 1) return "copy (1 rank)";
    return fmt::format("{}{} {}blk", name_, a.spec.coll == Collective::reduce ? "-read" : "", blocks(a));
  }

 private:
  int blocks(const CallArgs& a) const {
    const std::size_t bytes = a.count * element_size(a.spec.dtype);
    if (a.spec.coll == Collective::reduce) return blocks_for(bytes, kDirectReduceBytesPerBlock, read_blocks_);
    return blocks_for(bytes, kOneshotBytesPerBlock, ll_blocks_);
  }
  int ll_blocks_ = kOneshotMaxBlocks, read_blocks_ = kDirectReduceMaxBlocks;  // capped by resident_limit()
  std::size_t ll_per_rank_ = 0;
  std::unique_ptr<PeerState> peers_;
  // The reduce's own call counts: its barriers' flag values. The all-reduce's LL flags are its
  // call counts too, so the two never share a counter (a jump by the other could make an old LL
  // line look fresh).
  std::unique_ptr<DeviceCounters> read_epochs_;
  static_assert(kDirectReduceMaxBlocks <= kMaxChannels, "one barrier flag row per block");
};

class TwoshotGpu final : public GpuImpl {
 public:
  TwoshotGpu() : GpuImpl(ImplId::twoshot) {}
  CollectiveSet collectives() const override { return {Collective::allreduce}; }
  bool direct_access(const CaseSpec&) const override { return true; }
  void setup_kernels() override {
    max_blocks_ = std::min(twoshot_blocks(), resident_limit(1));
    peers_ = std::make_unique<PeerState>(ctx_.comm, kLowLatencyOffset, other_ranks(ctx_.comm));
  }
  void attach(const BufferSet& b) override { peers_->attach(b, true, true); }
  void detach() override { peers_->detach(); }
  void run(const CallArgs& a) override {
    if (n_ == 1) return copy_alone(a);
    launched(launch_twoshot(peers_->params(a, rank_, n_, blocks(a), limits()), stream_));
  }
  std::string describe(const CallArgs& a) override {
    return n_ == 1 ? "copy (1 rank)" : fmt::format("twoshot {}blk", blocks(a));
  }

 private:
  int blocks(const CallArgs& a) const {
    return blocks_for(a.count * element_size(a.spec.dtype) / static_cast<std::size_t>(n_), kTwoshotBytesPerBlock,
                      max_blocks_);
  }
  int max_blocks_ = knob_default<int>(Knob::gpu_twoshot_blocks);
  std::unique_ptr<PeerState> peers_;
};

}  // namespace

std::unique_ptr<Implementation> make_oneshot_gpu() { return std::make_unique<OneshotGpu>(); }
std::unique_ptr<Implementation> make_twoshot_gpu() { return std::make_unique<TwoshotGpu>(); }

}  // namespace ccbench
