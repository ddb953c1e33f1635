// `ccbench links` on GPU ranks: peer copies with copy engines (cudaMemcpyAsync into IPC-mapped
// peer memory) and with SM stores (links_kernels.cu), a flag ping-pong for latency, and pinned
// host copies per GPU.
#include <fmt/format.h>

#include "collectives/gpu/knobs.h"
#include "core/build_config.h"
#include "core/checks.h"
#include "core/error.h"
#include "harness/job/bootstrap.h"
#include "harness/links/links_measure.h"
#include "transports/gpu/gpu_conn.h"

#if CCBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <map>

#include "core/checks_cuda.h"
#include "harness/links/links_kernels.h"
#include "transports/gpu/cuda_ipc.h"
#endif

namespace ccbench {

#if !CCBENCH_HAVE_CUDA

std::vector<LinkResult> measure_gpu_links(const LinksOptions&, Transport, const RankLayout&, MPI_Comm, int,
                                          const std::vector<std::uint64_t>&) {
  fail(ExitCode::precondition, "links on GPU ranks: this ccbench was built without CUDA");
}

#else

namespace {

// Polls of the ping-pong kernel before it gives up on its peer: about 10 s at ~300 ns per
// volatile load from L2.
constexpr unsigned long long kSpinLimit = 30'000'000ull;

// What every rank publishes about its GPU.
struct GpuCard {
  char bus_id[32];
  cudaIpcMemHandle_t dst;   // the buffer peers write into
  cudaIpcMemHandle_t flag;  // the ping-pong flag peers write into
};

class GpuEndpoint {
 public:
  GpuEndpoint(int device, std::uint64_t bytes, const RankLayout& layout, MPI_Comm comm) : layout_(layout), comm_(comm) {
    CCB_CUDA(cudaSetDevice(device));
    CCB_CUDA(cudaMalloc(&src_, bytes));
    CCB_CUDA(cudaMalloc(&dst_, bytes));
    CCB_CUDA(cudaMalloc(&flag_, sizeof(std::uint32_t)));
    CCB_CUDA(cudaMemset(src_, 1, bytes));
    CCB_CUDA(cudaHostAlloc(&host_, bytes, cudaHostAllocDefault));
    CCB_CUDA(cudaHostAlloc(&timed_out_, sizeof(int), cudaHostAllocMapped));
    CCB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CCB_CUDA(cudaStreamCreateWithFlags(&stream2_, cudaStreamNonBlocking));
    CCB_CUDA(cudaEventCreate(&start_));
    CCB_CUDA(cudaEventCreate(&stop_));
    GpuCard me{};
    CCB_CUDA(cudaDeviceGetPCIBusId(me.bus_id, sizeof me.bus_id, device));
    CCB_CUDA(cudaIpcGetMemHandle(&me.dst, dst_));
    CCB_CUDA(cudaIpcGetMemHandle(&me.flag, flag_));
    cards_.resize(static_cast<size_t>(layout.nranks));
    check_mpi(MPI_Allgather(&me, sizeof me, MPI_BYTE, cards_.data(), sizeof me, MPI_BYTE, comm), "MPI_Allgather");
    // Which ordered pairs can copy peer to peer, known to every rank.
    std::vector<int> row(static_cast<size_t>(layout.nranks), 0);
    for (int p = 0; p < layout.nranks; ++p) row[static_cast<size_t>(p)] = can_reach(device, p);
    can_.resize(row.size() * row.size());
    check_mpi(MPI_Allgather(row.data(), layout.nranks, MPI_INT, can_.data(), layout.nranks, MPI_INT, comm),
              "MPI_Allgather of peer access");
  }
  // Collective where no exception is in flight: the peers' memory is unmapped on every rank before
  // any rank frees what its peers mapped (dst_, flag_); after an error those are left to the
  // process's end (transports/gpu/cuda_ipc.h).
  ~GpuEndpoint() {
    for (auto& [p, m] : peers_) {
      ipc_close(m.dst);
      ipc_close(m.flag);
    }
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
    cudaStreamDestroy(stream2_);
    cudaFreeHost(timed_out_);
    cudaFreeHost(host_);
    cudaFree(src_);
    if (!collective_teardown_allowed() || MPI_Barrier(comm_) != MPI_SUCCESS) return;
    cudaFree(flag_);
    cudaFree(dst_);
  }
  // Why src cannot copy into dst's memory, or "".
  std::string unreachable(int s, int d) const {
    const int code = can_[static_cast<size_t>(s * layout_.nranks + d)];
    if (code == 1) return "";
    if (code == 0) return "ranks on different nodes: peer copies connect GPUs of one node";
    if (code == 2) return "the two ranks share one GPU";
    return fmt::format("no peer access from GPU {} to GPU {} (cudaDeviceCanAccessPeer = 0)",
                       cards_[static_cast<size_t>(s)].bus_id, cards_[static_cast<size_t>(d)].bus_id);
  }
  // `n` copies of `bytes` into peer's memory with copy engines or SM stores; seconds.
  double copy_to(int peer, std::uint64_t bytes, int n, bool sm) {
    void* remote = mapped(peer).dst;
    return timed([&] {
      for (int i = 0; i < n; ++i) {
        if (sm) check_launch(links_kernels::sm_copy(remote, src_, bytes, stream_), "sm_copy");
        else CCB_CUDA(cudaMemcpyAsync(remote, src_, bytes, cudaMemcpyDeviceToDevice, stream_));
      }
    });
  }
  // Copy-engine latency: one small copy issued and waited for, `n` times; seconds per copy.
  double ce_latency(int peer, std::uint64_t bytes, int n) {
    void* remote = mapped(peer).dst;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      CCB_CUDA(cudaMemcpyAsync(remote, src_, bytes, cudaMemcpyDeviceToDevice, stream_));
      CCB_CUDA(cudaStreamSynchronize(stream_));
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n;
  }
  void reset_flag() {
    CCB_CUDA(cudaMemset(flag_, 0, sizeof(std::uint32_t)));
    CCB_CUDA(cudaDeviceSynchronize());
    *timed_out_ = 0;
  }
  // SM ping-pong of `n` rounds with `peer`; half a round trip in seconds (initiator's figure).
  double ping_pong(int peer, int n, bool initiator) {
    auto* peer_flag = static_cast<volatile std::uint32_t*>(mapped(peer).flag);
    int* timed_out = nullptr;
    CCB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&timed_out), timed_out_, 0));
    const double s = timed([&] {
      check_launch(links_kernels::ping_pong(static_cast<volatile std::uint32_t*>(flag_), peer_flag, n, initiator,
                                            kSpinLimit, timed_out, stream_),
                   "ping_pong");
    });
    if (*timed_out)
      fail(ExitCode::timeout, "links: rank {} (host {}) never answered the GPU ping-pong", peer,
           layout_.host_of[static_cast<size_t>(peer)]);
    return s / n / 2;
  }
  // Pinned host copies of this GPU: D2H, H2D, and both at once (two streams); GB/s each.
  struct HostRates {
    double d2h = 0, h2d = 0, both = 0;
  };
  HostRates host_copies(std::uint64_t bytes, int n) {
    HostRates r;
    const double moved = static_cast<double>(bytes) * n;
    r.d2h = moved / timed([&] { repeat_copy(host_, src_, bytes, n, cudaMemcpyDeviceToHost, stream_); }) / 1e9;
    r.h2d = moved / timed([&] { repeat_copy(dst_, host_, bytes, n, cudaMemcpyHostToDevice, stream_); }) / 1e9;
    r.both = both_ways(bytes, n);
    return r;
  }

  // D2H and H2D at once on two streams, GB/s of both: the D2H half reads src into the first half
  // of host memory, the H2D half writes dst from the second half, so they never touch one byte.
  double both_ways(std::uint64_t bytes, int n) {
    const std::uint64_t half = bytes / 2;
    return 2 * static_cast<double>(half) * n / timed([&] {
             cudaEvent_t forked;
             CCB_CUDA(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
             CCB_CUDA(cudaEventRecord(forked, stream_));
             CCB_CUDA(cudaStreamWaitEvent(stream2_, forked));
             repeat_copy(host_, src_, half, n, cudaMemcpyDeviceToHost, stream_);
             repeat_copy(dst_, static_cast<char*>(host_) + half, half, n, cudaMemcpyHostToDevice, stream2_);
             CCB_CUDA(cudaEventRecord(forked, stream2_));
             CCB_CUDA(cudaStreamWaitEvent(stream_, forked));
             CCB_CUDA(cudaEventDestroy(forked));
           }) /
           1e9;
  }

 private:
  struct Mapped {
    void* dst = nullptr;
    void* flag = nullptr;
  };
  // 1: peer copies possible; 0: other node; 2: same GPU; 3: no peer access.
  int can_reach(int device, int peer) const {
    if (peer == layout_.rank) return 1;
    if (!layout_.same_node(layout_.rank, peer)) return 0;
    int other = -1;
    if (cudaDeviceGetByPCIBusId(&other, cards_[static_cast<size_t>(peer)].bus_id) != cudaSuccess) return 3;
    if (other == device) return 2;
    int can = 0;
    CCB_CUDA(cudaDeviceCanAccessPeer(&can, device, other));
    return can ? 1 : 3;
  }
  const Mapped& mapped(int peer) {
    auto it = peers_.find(peer);
    if (it != peers_.end()) return it->second;
    Mapped m;
    const int world = world_rank(comm_, peer);
    m.dst = ipc_open(cards_[static_cast<size_t>(peer)].dst, world, IpcKind::buffer);
    try {
      m.flag = ipc_open(cards_[static_cast<size_t>(peer)].flag, world, IpcKind::buffer);
    } catch (...) {
      ipc_close(m.dst);
      throw;
    }
    return peers_.emplace(peer, m).first->second;
  }
  template <typename F>
  double timed(F&& enqueue) {
    CCB_CUDA(cudaEventRecord(start_, stream_));
    enqueue();
    CCB_CUDA(cudaEventRecord(stop_, stream_));
    CCB_CUDA(cudaEventSynchronize(stop_));
    float ms = 0;
    CCB_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms / 1e3;
  }
  static void repeat_copy(void* dst, const void* src, std::uint64_t bytes, int n, cudaMemcpyKind kind, cudaStream_t s) {
    for (int i = 0; i < n; ++i) CCB_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, s));
  }
  static void check_launch(int rc, const char* what) {
    if (rc != cudaSuccess) throw_cuda_error(static_cast<cudaError_t>(rc), what, __FILE__, __LINE__);
  }

  const RankLayout& layout_;
  MPI_Comm comm_;
  void *src_ = nullptr, *dst_ = nullptr, *flag_ = nullptr, *host_ = nullptr;
  int* timed_out_ = nullptr;
  cudaStream_t stream_ = nullptr, stream2_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::vector<GpuCard> cards_;
  std::vector<int> can_;
  std::map<int, Mapped> peers_;
};

// One ordered pair at one size, from a rank of the pair: warm-up, one way, both ways, latency.
PairFigures gpu_pair(GpuEndpoint& g, MPI_Comm comm, bool in_pair, bool is_src, int peer, std::uint64_t bytes,
                     const LinksOptions& o, bool sm, bool latency) {
  PairFigures f;
  if (in_pair && is_src) {
    g.copy_to(peer, bytes, o.warmup, sm);
    f.oneway_s = g.copy_to(peer, bytes, o.iterations, sm);
  }
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");  // both ways starts together
  if (in_pair) f.bidir_s = g.copy_to(peer, bytes, o.iterations, sm);
  if (!latency) return f;
  if (in_pair) g.reset_flag();
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");  // flags are zero before either side writes
  if (in_pair && sm) {
    const double s = g.ping_pong(peer, o.iterations, is_src);
    if (is_src) f.latency_s = s;
  } else if (in_pair && is_src) {
    f.latency_s = g.ce_latency(peer, bytes, o.iterations);
  }
  return f;
}

// Pinned host copies, largest size: each GPU alone (D2H, H2D, both ways), then every GPU both ways
// at once ("d2h+h2d all": what host staging gets when all GPUs of a node stage together; on
// 2 x H200 37 GB/s per direction each, against 48-51 for one GPU alone: h200x2-20261130-r11).
std::vector<LinkResult> gpu_host_copies(GpuEndpoint& g, const LinksOptions& o, const RankLayout& layout, MPI_Comm comm,
                                        std::uint64_t bytes) {
  std::vector<LinkResult> out;
  for (int r = 0; r < layout.nranks; ++r) {
    check_mpi(MPI_Barrier(comm), "MPI_Barrier between GPUs");
    double rates[3] = {0, 0, 0}, got[3] = {0, 0, 0};
    if (layout.rank == r) {
      const auto h = g.host_copies(bytes, o.iterations);
      rates[0] = h.d2h;
      rates[1] = h.h2d;
      rates[2] = h.both;
    }
    check_mpi(MPI_Reduce(rates, got, 3, MPI_DOUBLE, MPI_MAX, 0, comm), "MPI_Reduce");
    if (layout.rank != 0) continue;
    const char* modes[3] = {"d2h", "h2d", "d2h+h2d"};
    for (int m = 0; m < 3; ++m) {
      LinkResult c = link_cell(std::string(name(Transport::pcie)), modes[m], layout, r, -1, bytes);
      (m < 2 ? c.oneway_gbps : c.bidir_gbps) = got[m];
      out.push_back(std::move(c));
    }
  }
  if (layout.nranks < 2) return out;
  check_mpi(MPI_Barrier(comm), "MPI_Barrier before every GPU copies at once");
  const double mine = g.both_ways(bytes, o.iterations);
  std::vector<double> all(static_cast<std::size_t>(layout.nranks));
  check_mpi(MPI_Gather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm), "MPI_Gather");
  if (layout.rank != 0) return out;
  for (int r = 0; r < layout.nranks; ++r) {
    LinkResult c = link_cell(std::string(name(Transport::pcie)), kPcieAllAtOnce, layout, r, -1, bytes);
    c.bidir_gbps = all[static_cast<std::size_t>(r)];
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::vector<LinkResult> measure_gpu_links(const LinksOptions& o, Transport transport, const RankLayout& layout,
                                          MPI_Comm comm, int cuda_device, const std::vector<std::uint64_t>& sizes) {
  GpuEndpoint g(cuda_device, sizes.back(), layout, comm);
  std::vector<LinkResult> out;
  if (transport == Transport::pcie) return gpu_host_copies(g, o, layout, comm, sizes.back());
  const bool sm = transport == Transport::sm;
  for (std::uint64_t bytes : sizes) {
    const bool latency = bytes == sizes.front();
    for (int s = 0; s < layout.nranks; ++s)
      for (int d = 0; d < layout.nranks; ++d) {
        if (s == d) continue;
        // Both directions are measured (bidirectional), so both must be reachable.
        std::string why = g.unreachable(s, d);
        if (why.empty() && !g.unreachable(d, s).empty()) why = "the reverse direction: " + g.unreachable(d, s);
        check_mpi(MPI_Barrier(comm), "MPI_Barrier between pairs");  // one pair at a time
        const bool in_pair = why.empty() && (layout.rank == s || layout.rank == d);
        PairFigures mine;
        if (why.empty())
          mine = gpu_pair(g, comm, in_pair, layout.rank == s, layout.rank == s ? d : s, bytes, o, sm, latency);
        const PairFigures f = gather_pair_figures(comm, mine);
        if (layout.rank != 0) continue;
        LinkResult r = link_cell(std::string(name(transport)), "pair", layout, s, d, bytes);
        if (!why.empty()) {
          r.reason = why;
        } else {
          const double moved = static_cast<double>(bytes) * o.iterations;
          r.oneway_gbps = moved / f.oneway_s / 1e9;
          r.bidir_gbps = 2 * moved / f.bidir_s / 1e9;
          if (latency) r.latency_us = f.latency_s * 1e6;
        }
        out.push_back(std::move(r));
      }
  }
  return out;
}

#endif

}  // namespace ccbench
