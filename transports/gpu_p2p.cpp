// p2p: CUDA IPC peer memory. The region is device memory; peers open its IPC handle.
#include <cuda_runtime.h>

#include <cstring>

#include "core/error.h"
#include "core/checks_cuda.h"
#include "transports/gpu_transport.h"

namespace ccbench {

namespace {

struct P2pBlob {
  cudaIpcMemHandle_t handle;
};
static_assert(sizeof(P2pBlob) <= kConnectBlobBytes, "p2p connection data must fit the blob");

class P2pRegion final : public GpuRegion {
 public:
  P2pRegion(int rank, int nranks, std::size_t bytes) : GpuRegion(rank, nranks) {
    void* p = nullptr;
    CCB_CUDA(cudaMalloc(&p, bytes));
    CCB_CUDA(cudaMemset(p, 0, bytes));
    CCB_CUDA(cudaDeviceSynchronize());  // zeroed before any peer can see it
    set(rank, static_cast<char*>(p));
  }
  ~P2pRegion() override {
    for (void* p : opened_) cudaIpcCloseMemHandle(p);
    cudaFree(local());
  }
  void open(int peer, const P2pBlob& b) {
    void* p = nullptr;
    const cudaError_t rc = cudaIpcOpenMemHandle(&p, b.handle, cudaIpcMemLazyEnablePeerAccess);
    if (rc != cudaSuccess) {
      cudaGetLastError();
      fail(ExitCode::precondition, "p2p: cannot map rank {}'s GPU memory with CUDA IPC ({}: {}); --transport host "
           "stages through pinned host memory instead", peer, cudaGetErrorName(rc), cudaGetErrorString(rc));
    }
    opened_.push_back(p);
    set(peer, static_cast<char*>(p));
  }

 private:
  std::vector<void*> opened_;
};

std::unique_ptr<GpuRegion> p2p_setup(int rank, int nranks, std::size_t bytes, ConnectBlob* blob) {
  auto r = std::make_unique<P2pRegion>(rank, nranks, bytes);
  P2pBlob b{};
  CCB_CUDA(cudaIpcGetMemHandle(&b.handle, r->local()));
  std::memcpy(blob->data, &b, sizeof b);
  return r;
}

void p2p_connect(GpuRegion& mine, int peer, const ConnectBlob& theirs) {
  P2pBlob b{};
  std::memcpy(&b, theirs.data, sizeof b);
  static_cast<P2pRegion&>(mine).open(peer, b);
}

void p2p_connected(GpuRegion&) {}

}  // namespace

const GpuTransport& gpu_p2p_transport() {
  static const GpuTransport t{"p2p", p2p_setup, p2p_connect, p2p_connected};
  return t;
}

const GpuTransport& gpu_transport(std::string_view name) {
  if (name == "p2p") return gpu_p2p_transport();
  if (name == "host") return gpu_host_transport();
  fail(ExitCode::usage, "no GPU transport '{}' (valid: p2p, host)", name);
}

}  // namespace ccbench
