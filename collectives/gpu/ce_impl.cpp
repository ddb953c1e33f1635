// ce: data-movement collectives on the copy engines. Every piece is one cudaMemcpyAsync straight
// into (scatter: out of) a peer's IPC-mapped buffer, one stream per peer so that the copies run
// concurrently. A call is: a barrier (every peer is in this call, so its buffers may be written
// and read), the copies forked from the rank's stream onto the peer streams and joined back with
// events, this rank's own piece copied on its stream, and a second barrier (every copy into or
// out of this rank's buffers is done). All of it is enqueued, so a call can be captured into a
// CUDA graph.
//   allgather  my piece into block `rank` of every peer's output
//   alltoall   my send block p into receive block `rank` of peer p (alltoallv: the skewed blocks)
//   gather     my piece into block `rank` of the root's output
//   scatter    my block pulled from the root's send buffer: every rank copies only into its own
//              memory, so the protocol stays the one above (one copy per rank, the root's n-1
//              readers in parallel)
#include <fmt/format.h>

#include "collectives/gpu/gpu_impl.h"
#include "collectives/gpu/gpu_impls.h"
#include "collectives/gpu/peer_state.h"
#include "core/cuda_stream.h"

namespace ccbench {

namespace {

using namespace gpu;

// One copy of a call; `peer` is the other rank it reads or writes (its stream runs it).
struct PieceCopy {
  int peer = 0;
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
};

class CeGpu final : public GpuImpl {
 public:
  CeGpu() : GpuImpl(ImplId::ce) {}
  ~CeGpu() override {
    for (auto e : events_) cudaEventDestroy(e);
    for (auto s : side_) cudaStreamDestroy(s);
  }
  CollectiveSet collectives() const override {
    return {Collective::allgather, Collective::alltoall, Collective::alltoallv, Collective::gather,
            Collective::scatter};
  }
  bool direct_access(const CaseSpec&) const override { return true; }
  void setup_kernels() override {
    peers_ = std::make_unique<PeerState>(ctx_.comm, kLowLatencyOffset, other_ranks(ctx_.comm));
    // One side stream per peer so that the copy engines run the copies concurrently.
    for (int r = 0; r < n_; ++r) {
      side_.push_back(create_stream(StreamPriority::highest));  // as the collectives' own (core/cuda_stream.h)
    }
    events_.resize(static_cast<std::size_t>(n_) + 1);
    for (auto& e : events_) CCB_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    remote_.reserve(static_cast<std::size_t>(n_));
  }
  // Receive buffers are written by peers; send buffers are read by peers (scatter).
  void attach(const BufferSet& b) override { peers_->attach(b, true, true); }
  void detach() override { peers_->detach(); }
  void run(const CallArgs& a) override {
    plan(a);
    enqueue();
  }
  std::string describe(const CallArgs& a) override {
    if (n_ == 1) return "copy (1 rank)";
    const int copies = n_ - 1;
    const char* what = a.spec.coll == Collective::gather    ? " into the root"
                       : a.spec.coll == Collective::scatter ? " from the root"
                                                            : "";
    return fmt::format("ce {} peer cop{}{}", copies, copies == 1 ? "y" : "ies", what);
  }

 private:
  // The copies of one call: remote_ to or from peers, local_ this rank's own piece.
  void plan(const CallArgs& a) {
    remote_.clear();
    local_ = {};
    if (a.count == 0) return;  // nothing moves (every pointer below then lies inside its buffer)
    const std::size_t esz = element_size(a.spec.dtype);
    if (a.spec.coll == Collective::allgather) {
      char* mine = static_cast<char*>(a.recv) + static_cast<std::size_t>(rank_) * a.count * esz;
      for (int p = 0; p < n_; ++p) add({p, peers_->peer_address(p, mine), a.send, a.count * esz});
      return;
    }
    // All-to-all, alltoallv, gather: push my blocks into the receivers' outputs. Scatter: pull
    // my block out of the root's send buffer.
    const bool pull = a.spec.coll == Collective::scatter;
    for (int p = 0; p < n_; ++p) {
      const int from = pull ? p : rank_, to = pull ? rank_ : p;
      if (!moves_block(a.spec.coll, from, to, a.spec.root)) continue;
      const PeerBlock b = peer_block(a.spec.coll, from, to, n_, a.count);
      // Both pointers at the block's offsets in this rank's buffers, then moved to the rank
      // that owns them (the same offsets there: every rank lays out a call alike).
      char* dst = static_cast<char*>(a.recv) + b.recv_offset * esz;
      const char* src = static_cast<const char*>(a.send) + b.send_offset * esz;
      add({p, peers_->peer_address(to, dst), peers_->peer_address(from, src), b.count * esz});
    }
  }
  void add(const PieceCopy& c) {
    if (c.peer == rank_) local_ = c;
    else remote_.push_back(c);
  }
  void enqueue() {
    const PeerParams p = peers_->barrier_params(rank_, n_, limits());
    if (n_ > 1) launched(launch_barrier(p, stream_));  // every peer is in this call
    if (!remote_.empty()) CCB_CUDA(cudaEventRecord(events_[0], stream()));
    for (const PieceCopy& c : remote_) copy_on_side_stream(c);
    if (local_.bytes && local_.dst != local_.src)
      CCB_CUDA(cudaMemcpyAsync(local_.dst, local_.src, local_.bytes, cudaMemcpyDeviceToDevice, stream()));
    for (const PieceCopy& c : remote_)
      CCB_CUDA(cudaStreamWaitEvent(stream(), events_[static_cast<std::size_t>(c.peer) + 1], 0));
    if (n_ > 1) launched(launch_barrier(p, stream_));  // every copy touching this rank's buffers is done
  }
  // A copy on its peer's side stream, after the first barrier; its event joins it back.
  void copy_on_side_stream(const PieceCopy& c) {
    const auto i = static_cast<std::size_t>(c.peer);
    cudaStream_t s = side_[i];
    CCB_CUDA(cudaStreamWaitEvent(s, events_[0], 0));
    CCB_CUDA(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, s));
    CCB_CUDA(cudaEventRecord(events_[i + 1], s));
  }
  std::unique_ptr<PeerState> peers_;
  std::vector<cudaStream_t> side_;
  std::vector<cudaEvent_t> events_;
  std::vector<PieceCopy> remote_;
  PieceCopy local_;
};

}  // namespace

std::unique_ptr<Implementation> make_ce_gpu() { return std::make_unique<CeGpu>(); }

}  // namespace ccbench
