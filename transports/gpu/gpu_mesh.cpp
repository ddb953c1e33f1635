#include "transports/gpu/gpu_mesh.h"

#include <cstdint>
#include <exception>

#include <cuda_runtime.h>

#include <cstring>

#include "core/build_config.h"
#include "core/checks.h"
#include "core/checks_cuda.h"
#include "core/error.h"
#include "transports/agreement.h"
#include "transports/gpu/cuda_ipc.h"
#include "transports/ib/ib_transport.h"
#include "transports/net/gpu_direct.h"
#include "transports/ofi/ofi_transport.h"

namespace ccbench {

// Sets up `t`'s region on every rank that uses it and exchanges the connection blobs
// (collective). Peers are mapped later, only those a schedule talks to (map()).
GpuFifoMesh::Linked GpuFifoMesh::open_transport(const GpuPaths& paths, const GpuTransport& t, std::size_t bytes) {
  int n = 1;
  CCB_MPI(MPI_Comm_size(comm_, &n));
  const auto& mine = paths.of[idx(rank_)];
  bool used = false;
  for (const std::string& p : mine) used |= p == t.name;
  Linked l;
  l.transport = &t;
  ConnectBlob blob{};
  run_agreed(comm_, [&] {
    if (used) l.region = t.setup(rank_, n, bytes, &blob);
  });
  l.blobs.resize(static_cast<std::size_t>(n));
  check_mpi(MPI_Allgather(&blob, sizeof blob, MPI_BYTE, l.blobs.data(), sizeof blob, MPI_BYTE, comm_),
            "MPI_Allgather of GPU connection data");
  l.mapped.assign(static_cast<std::size_t>(n), false);
  return l;
}

// Maps `peer`'s region of `l` the first time a connection needs it. A failure is kept for
// finish(), which agrees on it over every rank: throwing here would leave the peers waiting.
GpuRegion& GpuFifoMesh::map(Linked& l, int peer) {
  if (!l.region) fail(ExitCode::runtime, "no {} region on rank {} for rank {}", l.transport->name, rank_, peer);
  if (!l.mapped[idx(peer)] && !l.error) {
    try {
      l.transport->connect(*l.region, peer, l.blobs[idx(peer)]);
      l.mapped[idx(peer)] = true;
    } catch (...) {
      l.error = std::current_exception();
    }
  }
  return *l.region;
}

// Every rank must lay its FIFOs out alike: a peer addresses our tails and slots with its own
// figures. The harness agrees the knobs and the GPUs' sizes before any set-up; this is the last
// line, so that no mismatch can ever reach a kernel.
void GpuFifoMesh::check_same_layout() const {
  int n = 1;
  CCB_MPI(MPI_Comm_size(comm_, &n));
  const std::uint64_t mine[2] = {fifos_, slot_};
  std::vector<std::uint64_t> all(2 * static_cast<std::size_t>(n));
  check_mpi(MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, comm_), "MPI_Allgather of FIFO layouts");
  for (int r = 1; r < n; ++r)
    if (all[2 * idx(r)] != all[0] || all[2 * idx(r) + 1] != all[1])
      throw Error::agreed(
          ExitCode::precondition,
          fmt::format("GPU FIFOs: rank 0 has {} FIFOs of {} x {} B slots and rank {} has {} of {} x {} B; "
                      "every rank must lay them out alike (the same CCBENCH_GPU_* settings and GPUs)",
                      all[0], gpu::kFifoSlots, all[1], r, all[2 * idx(r)], gpu::kFifoSlots, all[2 * idx(r) + 1]));
}

// Collective: every rank's mapping outcome agreed; then (a barrier passed) the names go.
void GpuFifoMesh::finish_mapping(Linked& l) {
  run_agreed(comm_, [&] {
    if (l.error) std::rethrow_exception(l.error);
  });
  if (l.region) l.transport->connected(*l.region);
}

namespace {

// Whether net FIFO slots over `backend` go in the GPU memory of `device` (ib with GPUDirect RDMA
// where the options allow it and the GPU exports dma-bufs; ofi where start-up found the provider
// takes GPU memory, prepare_ofi_gpu).
bool net_slots_in_gpu(const std::string& backend, int device) {
  if (backend == name(Transport::ofi)) return ofi_hmem_device() == device;
#if CCBENCH_HAVE_IBVERBS
  return backend == name(Transport::ib) && !gpudirect_unavailable_reason(ib_options().gpudirect, device);
#else
  (void)backend;
  (void)device;
  return false;
#endif
}

// A FIFO counter at `offset` of a region.
volatile std::uint64_t* counter(char* base, std::size_t offset) {
  return reinterpret_cast<volatile std::uint64_t*>(base + offset);
}

}  // namespace

// The FIFOs of both halves of a connection are laid out by the modes, so ranks that differ could
// only hang: every rank checks that all have the same.
std::optional<HostCopyModes> agreed_host_copy(MPI_Comm comm) {
  HostCopyModes m{};
  bool forced = false;
  run_agreed(comm, [&] {
    m = host_copy_modes();
    forced = host_copy_forced();
  });
  const int mine[3] = {static_cast<int>(m.recv), static_cast<int>(m.send), forced ? 1 : 0};
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  check_mpi(MPI_Allreduce(mine, lo, 3, MPI_INT, MPI_MIN, comm), "MPI_Allreduce of the host copy modes");
  check_mpi(MPI_Allreduce(mine, hi, 3, MPI_INT, MPI_MAX, comm), "MPI_Allreduce of the host copy modes");
  if (lo[0] != hi[0] || lo[1] != hi[1] || lo[2] != hi[2])
    fail(ExitCode::usage,
         "host: CCBENCH_GPU_HOST_RECV and CCBENCH_GPU_HOST_SEND differ between ranks (here {} "
         "and {}{}); give every rank the same values (mpirun -x)",
         host_copy_name(m.recv), host_copy_name(m.send), forced ? "" : ", unset");
  if (!forced) return std::nullopt;
  return m;
}

GpuFifoMesh::GpuFifoMesh(MPI_Comm comm, const GpuPaths& paths, int fifos, std::size_t slot_bytes, std::uint64_t* steps,
                         std::optional<HostCopyModes> host_copy)
    : fifos_(static_cast<std::size_t>(fifos)), slot_(slot_bytes), steps_(steps), comm_(comm) {
  CCB_MPI(MPI_Comm_rank(comm, &rank_));
  check_same_layout();
  // The counters follow the slots (tail(), head(), sizes()): aligned only where the slots' bytes
  // are. The same on every rank (check_same_layout), so every rank throws alike.
  if (gpu::kFifoSlots * slot_ % kHostFlagAlign != 0)
    throw Error::agreed(ExitCode::runtime,
                        fmt::format("GPU FIFOs: {} slots of {} B would put the counters after them off the {}-byte "
                                    "alignment the CPU's atomic access needs; slot sizes are multiples of {} B",
                                    gpu::kFifoSlots, slot_, kHostFlagAlign, kHostFlagAlign));
  path_of_ = paths.of[static_cast<std::size_t>(rank_)];
  const std::size_t bytes = fifos_ * (gpu::kFifoSlots * slot_bytes + 2 * kLine);
  p2p_ = open_transport(paths, gpu_p2p_transport(), bytes);
  if (host_copy) host_copy_ = *host_copy;  // the caller's choice, the same on every rank
  else if (paths.uses(Transport::host)) host_copy_ = agreed_host_copy(comm).value_or(HostCopyModes{});
  // A ce receiver copies only each step's bytes: the sender writes them beside the tail.
  const std::size_t sizes_bytes = host_copy_.recv == HostCopy::ce ? fifos_ * kLine : 0;
  host_ = open_transport(paths, gpu_host_transport(), bytes + sizes_bytes);
  if (host_copy_.any_ce())  // the same on every rank: run_agreed() is collective
    run_agreed(comm, [&] {
      if (!host_.region) return;
      CCB_CUDA(cudaGetDevice(&device_));
      if (host_copy_.recv == HostCopy::ce) ce_recv_fifos_ = std::make_unique<DeviceFifos>(fifos_, slot_);
      if (host_copy_.send == HostCopy::ce) ce_send_fifos_ = std::make_unique<DeviceFifos>(fifos_, slot_);
    });
  uses_net_ = paths.uses(Transport::net);  // same on every rank
  bool mine = false;
  for (const std::string& p : path_of_) mine |= p == name(Transport::net);
  net_backend_.transport = paths.net_backend;
  if (mine) {
    net_half_ = bytes + fifos_ * kLine;  // with the step sizes
    CCB_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&net_host_), 2 * net_half_, cudaHostAllocMapped));
    std::memset(net_host_, 0, 2 * net_half_);
    CCB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&net_device_), net_host_, 0));
    CCB_CUDA(cudaGetDevice(&device_));
    if (net_slots_in_gpu(net_backend_.transport, device_)) {
      net_backend_.slots_gpu = device_;
      CCB_CUDA(cudaMalloc(reinterpret_cast<void**>(&net_gpu_slots_), 2 * data(static_cast<int>(fifos_))));
    }
  }
}

char* GpuFifoMesh::net_slots(bool staging, int f, bool for_proxy) const {
  if (net_gpu_slots_) return net_gpu_slots_ + (staging ? data(static_cast<int>(fifos_)) : 0) + data(f);
  return (for_proxy ? net_host_ : net_device_) + (staging ? net_half_ : 0) + data(f);
}

std::string GpuFifoMesh::transport_label(const GpuPaths& paths) const {
  if (paths.net_backend == name(Transport::ofi) && uses_net_) {  // "net/ofi:tcp;ofi_rxm:host"
    const std::string at = "net/ofi";
    std::string label = paths.label;
    if (const auto i = label.find(at); i != std::string::npos)
      label.replace(i, at.size(), "net/" + ofi_gpu_label(net_gpu_slots_ != nullptr));
    return label;
  }
  if (paths.net_backend != name(Transport::ib) || !uses_net_) return paths.label;
  return paths.label + (net_gpu_slots_ ? ":gpudirect" : ":host");
}

GpuFifoMesh::~GpuFifoMesh() {
  proxy_.reset();  // the proxies stop before the memory they move goes
  ce_proxy_.reset();
  if (net_host_) (void)cudaFreeHost(net_host_);
  if (net_gpu_slots_) (void)cudaFree(net_gpu_slots_);
  // Every rank unmaps its peers, then a barrier: no region is freed while a peer maps it. A
  // destructor cannot report; after an error (or a failed barrier) the regions are left to the
  // process's end instead.
  for (Linked* l : {&p2p_, &host_})
    if (l->region) l->transport->disconnect(*l->region);
  if (!collective_teardown_allowed() || MPI_Barrier(comm_) != MPI_SUCCESS) return;
  for (Linked* l : {&p2p_, &host_})
    if (l->region) l->region->set_unmapped();
}

gpu::SendConn GpuFifoMesh::send(int peer, int peer_fifo, int my_out) {
  if (path_of_[idx(peer)] == name(Transport::net)) {
    const std::size_t s = net_half_;  // the staging half
    net_sends_.push_back({peer, peer_fifo, net_slots(true, my_out, true),
                          reinterpret_cast<volatile std::uint64_t*>(net_host_ + s + tail(my_out)),
                          reinterpret_cast<volatile std::uint64_t*>(net_host_ + s + head(my_out)),
                          reinterpret_cast<const volatile std::uint64_t*>(net_host_ + s + sizes(my_out))});
    return {net_slots(true, my_out, false),
            reinterpret_cast<volatile std::uint64_t*>(net_device_ + s + tail(my_out)),
            reinterpret_cast<const volatile std::uint64_t*>(net_device_ + s + head(my_out)),
            steps_ + 2 * idx(my_out),
            peer,
            reinterpret_cast<volatile std::uint64_t*>(net_device_ + s + sizes(my_out))};
  }
  if (path_of_[idx(peer)] == name(Transport::host)) return host_send(peer, peer_fifo, my_out);
  const GpuRegion& g = map(p2p_, peer);
  char* p = g.of(peer);
  return {p + data(peer_fifo), reinterpret_cast<volatile std::uint64_t*>(p + tail(peer_fifo)),
          reinterpret_cast<const volatile std::uint64_t*>(g.local() + head(my_out)), steps_ + 2 * idx(my_out), peer};
}

gpu::RecvConn GpuFifoMesh::recv(int peer, int my_fifo, int peer_out) {
  if (path_of_[idx(peer)] == name(Transport::net)) {
    // Incoming half; our head for this FIFO sits in the head line of the same id.
    net_recvs_.push_back({peer, my_fifo, net_slots(false, my_fifo, true),
                          reinterpret_cast<volatile std::uint64_t*>(net_host_ + tail(my_fifo)),
                          reinterpret_cast<volatile std::uint64_t*>(net_host_ + head(my_fifo))});
    return {
        net_slots(false, my_fifo, false), reinterpret_cast<const volatile std::uint64_t*>(net_device_ + tail(my_fifo)),
        reinterpret_cast<volatile std::uint64_t*>(net_device_ + head(my_fifo)), steps_ + 2 * idx(my_fifo) + 1, peer};
  }
  if (path_of_[idx(peer)] == name(Transport::host)) return host_recv(peer, my_fifo, peer_out);
  const GpuRegion& g = map(p2p_, peer);
  char* p = g.of(peer);
  return {g.local() + data(my_fifo), reinterpret_cast<const volatile std::uint64_t*>(g.local() + tail(my_fifo)),
          reinterpret_cast<volatile std::uint64_t*>(p + head(peer_out)), steps_ + 2 * idx(my_fifo) + 1, peer};
}

// sm: the kernel writes the peer's host FIFO (and each step's size where the peer's receive half
// is ce). ce: the kernel writes our GPU FIFO `my_out`; the proxy copies each step into the
// peer's host FIFO, where the peer frees it in our head `my_out`.
gpu::SendConn GpuFifoMesh::host_send(int peer, int peer_fifo, int my_out) {
  const GpuRegion& host = map(host_, peer);
  char* p = host.of(peer);
  std::uint64_t* step = steps_ + 2 * idx(my_out);
  volatile std::uint64_t* peer_sizes = host_copy_.recv == HostCopy::ce ? counter(p, sizes(peer_fifo)) : nullptr;
  if (host_copy_.send == HostCopy::sm)
    return {p + data(peer_fifo), counter(p, tail(peer_fifo)), counter(host.local(), head(my_out)), step, peer,
            peer_sizes};
  char* ph = host.host_of(peer);
  const FifoPointers k = ce_send_fifos_->kernel(my_out), x = ce_send_fifos_->proxy(my_out);
  StageEnds e;
  e.peer = peer;
  e.src_slots = x.slots;
  e.src_tail = x.tail;
  e.src_sizes = x.sizes;
  e.src_head = x.head;
  e.dst_slots = ph + data(peer_fifo);
  e.dst_tail = counter(ph, tail(peer_fifo));
  e.dst_sizes = peer_sizes ? counter(ph, sizes(peer_fifo)) : nullptr;
  e.dst_head = counter(host.host_of(rank_), head(my_out));
  ce_sends_.push_back(e);
  return {k.slots, k.tail, k.head, step, peer, k.sizes};
}

// sm: the kernel reads our host FIFO `my_fifo`. ce: the proxy copies each step of it into our
// GPU FIFO `my_fifo`, which the kernel reads; the proxy frees host slots in the peer's head.
gpu::RecvConn GpuFifoMesh::host_recv(int peer, int my_fifo, int peer_out) {
  const GpuRegion& host = map(host_, peer);
  std::uint64_t* step = steps_ + 2 * idx(my_fifo) + 1;
  if (host_copy_.recv == HostCopy::sm)
    return {host.local() + data(my_fifo), counter(host.local(), tail(my_fifo)), counter(host.of(peer), head(peer_out)),
            step, peer};
  char* mine = host.host_of(rank_);
  const FifoPointers k = ce_recv_fifos_->kernel(my_fifo), x = ce_recv_fifos_->proxy(my_fifo);
  StageEnds e;
  e.peer = peer;
  e.src_slots = mine + data(my_fifo);
  e.src_tail = counter(mine, tail(my_fifo));
  e.src_sizes = counter(mine, sizes(my_fifo));
  e.src_head = counter(host.host_of(peer), head(peer_out));
  e.dst_slots = x.slots;
  e.dst_tail = x.tail;
  e.dst_head = x.head;
  ce_recvs_.push_back(e);
  return {k.slots, k.tail, k.head, step, peer};
}

void GpuFifoMesh::finish(const RankLayout& layout, std::chrono::milliseconds timeout) {
  finish_mapping(p2p_);
  finish_mapping(host_);
  if (host_copy_.any_ce())  // the same on every rank: run_agreed() is collective
    run_agreed(comm_, [&] {
      if (!ce_recvs_.empty() || !ce_sends_.empty())
        ce_proxy_ = std::make_unique<HostCeProxy>(device_, slot_, ce_recvs_, ce_sends_);
    });
  if (!uses_net_) return;
  proxy_ = std::make_unique<NetProxy>(comm_, layout, slot_, net_sends_, net_recvs_, timeout, net_backend_);
}

void GpuFifoMesh::check() const {
  if (ce_proxy_) ce_proxy_->check();
  if (proxy_) proxy_->check();
}

}  // namespace ccbench
