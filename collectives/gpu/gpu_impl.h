#pragma once
// What every GPU kernel implementation shares: rank, stream, device-error record, the checks
// that the ranks can run our kernels, and the block-count helpers.
#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>

#include "collectives/gpu/cuda_resources.h"
#include "collectives/implementation.h"
#include "transports/gpu/gpu_paths.h"

namespace ccbench::gpu {

// One block per `bytes_per_block` (at least 1, at most `max_blocks`).
int blocks_for(std::size_t bytes, std::size_t bytes_per_block, int max_blocks);
// The GPU transport of every pair under ctx.transport: peer access as the harness agreed it
// (RankLayout::gpu_peer_access, GPUs known by PCI bus id), or where it was not gathered (tests),
// asked of CUDA here with a rank's GPU as its rank among its host's ranks modulo the GPUs.
GpuPaths plan_paths(const ImplContext& ctx);
// The run's layout as the harness gave it, or all ranks on one host where it gave none.
RankLayout run_layout(const ImplContext& ctx);
// Whether two ranks of a node share a GPU (--share-gpus; RankLayout::same_gpu).
bool gpus_shared(const ImplContext& ctx);

class GpuImpl : public Implementation {
 public:
  explicit GpuImpl(ImplId id) : name_(name(id)) {}
  std::optional<std::string> unsupported(const CaseSpec& s, const ImplContext& ctx) const override;
  void setup(const ImplContext& ctx) override;
  void check_async_errors() override;
  // What the FIFO connections use: "p2p", "host", "p2p+net/tcp", ... (gpu_paths.h); net/ib with
  // ":gpudirect" or ":host" once the FIFOs are set up (GpuFifoMesh::transport_label).
  std::string transport() const override { return transport_label_.empty() ? paths_.label : transport_label_; }
  bool graph_capturable() const override { return true; }

 protected:
  // Whether the case's kernel addresses peer memory directly (one-shot, two-shot, Bruck, ce):
  // then it runs only where every pair has p2p.
  virtual bool direct_access(const CaseSpec& s) const = 0;
  virtual void setup_kernels() = 0;
  WaitLimits limits() const { return errors_->limits(ctx_.timeout); }
  // Channels of `blocks_per_channel` blocks that fit resident at once on every rank's GPU: the
  // blocks of one launch wait on each other (and on the same blocks of the peers), so a grid must
  // never need more than is resident. One block per SM, over the fewest SMs of any rank's GPU
  // (agreed in setup(): mixed GPU models lay out alike), divided among the ranks of a node
  // sharing one GPU (under MPS they run at once), and beside an --overlap load over the SMs it
  // leaves free (ImplContext::collective_sms); at least 1. The same on every rank.
  int resident_limit(int blocks_per_channel) const;
  cudaStream_t stream() const { return static_cast<cudaStream_t>(stream_); }
  void launched(int rc) const { CCB_CUDA(static_cast<cudaError_t>(rc)); }
  // The proxy's errors (net), checked before the kernels' own.
  virtual void check_connections() {}
  // The run's layout (a one-host layout when the harness gave none).
  const RankLayout& layout() const { return ctx_.layout ? *ctx_.layout : own_layout_; }
  bool over_net() const { return paths_.uses(Transport::net); }
  // One rank: the result is the input.
  void copy_alone(const CallArgs& a) const;
  std::string name_;  // name(id), for messages
  ImplContext ctx_;
  int rank_ = 0, n_ = 1;
  int agreed_sms_ = 1;   // the fewest SMs of any rank's GPU
  int gpu_sharers_ = 1;  // the most ranks of a node on one GPU
  void* stream_ = nullptr;
  std::unique_ptr<DeviceErrors> errors_;
  GpuPaths paths_;
  std::string transport_label_;  // set where the FIFO set-up refines paths_.label
  RankLayout own_layout_;
};

}  // namespace ccbench::gpu
