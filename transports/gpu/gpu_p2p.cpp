// p2p: CUDA IPC peer memory. The region is device memory; peers open its IPC handle.
#include <cuda_runtime.h>

#include <cstring>

#include <fmt/format.h>

#include "core/checks.h"
#include "core/checks_cuda.h"
#include "core/error.h"
#include "transports/gpu/cuda_ipc.h"
#include "transports/gpu/gpu_transport.h"
#include "core/transport_names.h"

namespace ccbench {

namespace {

struct P2pBlob {
  cudaIpcMemHandle_t handle;
  int world_rank;  // the owner's, for ipc_imports()
};
static_assert(sizeof(P2pBlob) <= kConnectBlobBytes, "p2p connection data must fit the blob");

class P2pRegion final : public GpuRegion {
 public:
  P2pRegion(int rank, int nranks, std::size_t bytes) : GpuRegion(rank, nranks) {
    void* p = nullptr;
    CCB_CUDA(cudaMalloc(&p, bytes));
    set(rank, static_cast<char*>(p));
    CCB_CUDA(cudaMemset(p, 0, bytes));
    CCB_CUDA(cudaDeviceSynchronize());  // zeroed before any peer can see it
  }
  // The own memory goes only where no peer maps it any more (unmapped()); else the process's end frees it.
  ~P2pRegion() override {
    disconnect();
    if (unmapped() && local()) (void)cudaFree(local());
  }
  void open(int peer, const P2pBlob& b) {
    void* p = nullptr;
    try {
      p = ipc_open(b.handle, b.world_rank, IpcKind::fifos);
    } catch (const Error& e) {
      throw Error(e.code(), fmt::format("p2p: {}", e.what()));
    }
    opened_.push_back(p);
    set(peer, static_cast<char*>(p));
  }
  void disconnect() {
    for (void* p : opened_) ipc_close(p);
    opened_.clear();
    for (int r = 0; r < nranks(); ++r)
      if (r != rank_) set(r, nullptr);
  }

 private:
  std::vector<void*> opened_;
};

std::unique_ptr<GpuRegion> p2p_setup(int rank, int nranks, std::size_t bytes, ConnectBlob* blob) {
  auto r = std::make_unique<P2pRegion>(rank, nranks, bytes);
  P2pBlob b{};
  CCB_CUDA(cudaIpcGetMemHandle(&b.handle, r->local()));
  CCB_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &b.world_rank));
  std::memcpy(blob->data, &b, sizeof b);
  r->set_unmapped(false);  // the blob goes out: peers may map it from now on
  return r;
}

void p2p_connect(GpuRegion& mine, int peer, const ConnectBlob& theirs) {
  P2pBlob b{};
  std::memcpy(&b, theirs.data, sizeof b);
  static_cast<P2pRegion&>(mine).open(peer, b);
}

void p2p_disconnect(GpuRegion& mine) { static_cast<P2pRegion&>(mine).disconnect(); }

void p2p_connected(GpuRegion&) {}

}  // namespace

const GpuTransport& gpu_p2p_transport() {
  static const GpuTransport t{name(Transport::p2p), p2p_setup, p2p_connect, p2p_connected, p2p_disconnect};
  return t;
}

const GpuTransport& gpu_transport(std::string_view label) {
  if (label == name(Transport::p2p)) return gpu_p2p_transport();
  if (label == name(Transport::host)) return gpu_host_transport();
  fail(ExitCode::usage, "no GPU transport '{}' (valid: {}, {})", label, name(Transport::p2p), name(Transport::host));
}

}  // namespace ccbench
