// ce: all-gather with the copy engines, each piece copied to every peer concurrently.
#include <fmt/format.h>

#include "collectives/gpu/gpu_impl.h"
#include "collectives/gpu/gpu_impls.h"
#include "collectives/gpu/peer_state.h"

namespace ccbench {

namespace {

using namespace gpu;

class CeGpu final : public GpuImpl {
 public:
  CeGpu() : GpuImpl("ce") {}
  ~CeGpu() override {
    for (auto e : events_) cudaEventDestroy(e);
    for (auto s : side_) cudaStreamDestroy(s);
  }
  CollectiveSet collectives() const override { return {Collective::allgather}; }
  bool direct_access(const CaseSpec&) const override { return true; }
  void setup_kernels() override {
    peers_ = std::make_unique<PeerState>(ctx_.comm, kLowLatencyOffset);
    // One side stream per peer so that the copy engines run the copies concurrently.
    for (int r = 0; r < n_; ++r) {
      cudaStream_t s;
      CCB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      side_.push_back(s);
    }
    events_.resize(static_cast<std::size_t>(n_) + 1);
    for (auto& e : events_) CCB_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  void attach(const BufferSet& b) override { peers_->attach(b, false, true); }
  void detach() override { peers_->detach(); }
  void run(const CallArgs& a) override {
    const std::size_t piece = a.count * element_size(a.spec.dtype);
    char* mine = static_cast<char*>(a.recv) + static_cast<std::size_t>(rank_) * piece;
    if (n_ == 1) {
      if (a.send != mine && piece) CCB_CUDA(cudaMemcpyAsync(mine, a.send, piece, cudaMemcpyDeviceToDevice, stream()));
      return;
    }
    const PeerParams p = peers_->params(a, rank_, n_, 1, limits());
    launched(launch_barrier(p, stream_));  // every peer's output may be written
    CCB_CUDA(cudaEventRecord(events_[0], stream()));
    for (int r = 0; r < n_; ++r)
      if (r != rank_) copy_to_peer(a, r, piece);
    if (a.send != mine && piece) CCB_CUDA(cudaMemcpyAsync(mine, a.send, piece, cudaMemcpyDeviceToDevice, stream()));
    for (int r = 0; r < n_; ++r)
      if (r != rank_) CCB_CUDA(cudaStreamWaitEvent(stream(), events_[static_cast<std::size_t>(r) + 1], 0));
    launched(launch_barrier(p, stream_));  // every peer's copies into this output are done
  }
  std::string describe(const CallArgs&) override {
    return n_ == 1 ? "copy (1 rank)" : fmt::format("ce {} peer cop{}", n_ - 1, n_ == 2 ? "y" : "ies");
  }

 private:
  // This rank's piece into rank r's output, on r's side stream after the first barrier.
  void copy_to_peer(const CallArgs& a, int r, std::size_t piece) {
    cudaStream_t s = side_[static_cast<std::size_t>(r)];
    CCB_CUDA(cudaStreamWaitEvent(s, events_[0], 0));
    const std::size_t call_offset = static_cast<std::size_t>(static_cast<char*>(a.recv) - static_cast<char*>(peers_->recv_of(rank_)));
    char* dst = static_cast<char*>(peers_->recv_of(r)) + call_offset + static_cast<std::size_t>(rank_) * piece;
    if (piece) CCB_CUDA(cudaMemcpyAsync(dst, a.send, piece, cudaMemcpyDeviceToDevice, s));
    CCB_CUDA(cudaEventRecord(events_[static_cast<std::size_t>(r) + 1], s));
  }
  std::unique_ptr<PeerState> peers_;
  std::vector<cudaStream_t> side_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace

std::unique_ptr<Implementation> make_ce_gpu() { return std::make_unique<CeGpu>(); }

}  // namespace ccbench
