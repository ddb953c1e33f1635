#include "transports/gpu_mesh.h"

#include <climits>
#include <cstdint>
#include <exception>
#include <string_view>

#include <cuda_runtime.h>

#include <cstring>

#include "core/checks.h"
#include "core/checks_cuda.h"
#include "core/error.h"

namespace ccbench {

namespace {

// Runs `step` on this rank and agrees on the outcome, so that a failure on one rank (a full
// /dev/shm, a refused mapping) ends set-up on every rank instead of leaving its peers waiting in
// the next collective. The failing rank rethrows its own error; the others name it.
template <typename Step>
void agreed(MPI_Comm comm, std::string_view transport, const char* what, Step&& step) {
  int rank = 0;
  CCB_MPI(MPI_Comm_rank(comm, &rank));
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  int mine = error ? rank : INT32_MAX, first = INT32_MAX;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce of GPU connection set-up");
  if (error) std::rethrow_exception(error);
  if (first != INT32_MAX)
    fail(ExitCode::precondition, "{}: rank {} could not {} (its message says why)", transport, first, what);
}

// Sets up `t` on every rank that uses it and connects the pairs that do (collective).
std::unique_ptr<GpuRegion> connect_transport(MPI_Comm comm, const GpuPaths& paths, const GpuTransport& t,
                                             std::size_t bytes) {
  int rank = 0, n = 1;
  CCB_MPI(MPI_Comm_rank(comm, &rank));
  CCB_MPI(MPI_Comm_size(comm, &n));
  const auto& mine = paths.of[static_cast<std::size_t>(rank)];
  bool used = false;
  for (const std::string& p : mine) used |= p == t.name;
  ConnectBlob blob{};
  std::unique_ptr<GpuRegion> region;
  agreed(comm, t.name, "set up its FIFO memory", [&] {
    if (used) region = t.setup(rank, n, bytes, &blob);
  });
  std::vector<ConnectBlob> all(static_cast<std::size_t>(n));
  check_mpi(MPI_Allgather(&blob, sizeof blob, MPI_BYTE, all.data(), sizeof blob, MPI_BYTE, comm),
            "MPI_Allgather of GPU connection data");
  agreed(comm, t.name, "map its peers' FIFO memory", [&] {
    for (int r = 0; r < n; ++r)
      if (mine[static_cast<std::size_t>(r)] == t.name) t.connect(*region, r, all[static_cast<std::size_t>(r)]);
  });
  // The agreement above is the barrier: every peer mapped our region, so its name may go.
  if (region) t.connected(*region);
  return region;
}

}  // namespace

GpuFifoMesh::GpuFifoMesh(MPI_Comm comm, const GpuPaths& paths, int fifos, std::size_t slot_bytes, std::uint64_t* steps)
    : fifos_(static_cast<std::size_t>(fifos)), slot_(slot_bytes), steps_(steps), comm_(comm) {
  CCB_MPI(MPI_Comm_rank(comm, &rank_));
  path_of_ = paths.of[static_cast<std::size_t>(rank_)];
  const std::size_t bytes = fifos_ * (gpu::kFifoSlots * slot_bytes + 2 * kLine);
  p2p_ = connect_transport(comm, paths, gpu_p2p_transport(), bytes);
  host_ = connect_transport(comm, paths, gpu_host_transport(), bytes);
  uses_net_ = paths.label.find("net") != std::string::npos;  // same on every rank
  bool mine = false;
  for (const std::string& p : path_of_) mine |= p == "net";
  if (mine) {
    net_half_ = bytes + fifos_ * kLine;  // with the step sizes
    CCB_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&net_host_), 2 * net_half_, cudaHostAllocMapped));
    std::memset(net_host_, 0, 2 * net_half_);
    CCB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&net_device_), net_host_, 0));
  }
}

GpuFifoMesh::~GpuFifoMesh() {
  proxy_.reset();  // the proxy stops before the memory it moves goes
  if (net_host_) (void)cudaFreeHost(net_host_);
}

const GpuRegion& GpuFifoMesh::region_with(int peer) const {
  const std::string& p = path_of_[idx(peer)];
  const GpuRegion* r = p == "p2p" ? p2p_.get() : p == "host" ? host_.get() : nullptr;
  if (!r) fail(ExitCode::runtime, "no GPU connection from rank {} to rank {}", rank_, peer);
  return *r;
}

gpu::SendConn GpuFifoMesh::send(int peer, int peer_fifo, int my_out) {
  if (path_of_[idx(peer)] == "net") {
    const std::size_t s = net_half_;  // the staging half
    net_sends_.push_back({peer, peer_fifo, net_host_ + s + data(my_out),
                          reinterpret_cast<volatile std::uint64_t*>(net_host_ + s + tail(my_out)),
                          reinterpret_cast<volatile std::uint64_t*>(net_host_ + s + head(my_out)),
                          reinterpret_cast<const volatile std::uint64_t*>(net_host_ + s + sizes(my_out))});
    return {net_device_ + s + data(my_out), reinterpret_cast<volatile std::uint64_t*>(net_device_ + s + tail(my_out)),
            reinterpret_cast<const volatile std::uint64_t*>(net_device_ + s + head(my_out)), steps_ + 2 * idx(my_out),
            peer, reinterpret_cast<volatile std::uint64_t*>(net_device_ + s + sizes(my_out))};
  }
  const GpuRegion& g = region_with(peer);
  char* p = g.of(peer);
  return {p + data(peer_fifo), reinterpret_cast<volatile std::uint64_t*>(p + tail(peer_fifo)),
          reinterpret_cast<const volatile std::uint64_t*>(g.local() + head(my_out)), steps_ + 2 * idx(my_out), peer};
}

gpu::RecvConn GpuFifoMesh::recv(int peer, int my_fifo, int peer_out) {
  if (path_of_[idx(peer)] == "net") {
    // Incoming half; our head for this FIFO sits in the head line of the same id.
    net_recvs_.push_back({peer, my_fifo, net_host_ + data(my_fifo),
                          reinterpret_cast<volatile std::uint64_t*>(net_host_ + tail(my_fifo)),
                          reinterpret_cast<volatile std::uint64_t*>(net_host_ + head(my_fifo))});
    return {net_device_ + data(my_fifo), reinterpret_cast<const volatile std::uint64_t*>(net_device_ + tail(my_fifo)),
            reinterpret_cast<volatile std::uint64_t*>(net_device_ + head(my_fifo)), steps_ + 2 * idx(my_fifo) + 1,
            peer};
  }
  const GpuRegion& g = region_with(peer);
  char* p = g.of(peer);
  return {g.local() + data(my_fifo), reinterpret_cast<const volatile std::uint64_t*>(g.local() + tail(my_fifo)),
          reinterpret_cast<volatile std::uint64_t*>(p + head(peer_out)), steps_ + 2 * idx(my_fifo) + 1, peer};
}

void GpuFifoMesh::finish(const RankLayout& layout, std::chrono::milliseconds timeout) {
  if (!uses_net_) return;
  proxy_ = std::make_unique<NetProxy>(comm_, layout, slot_, net_sends_, net_recvs_, timeout);
}

void GpuFifoMesh::check() const {
  if (proxy_) proxy_->check();
}

}  // namespace ccbench
