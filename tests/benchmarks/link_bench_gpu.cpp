// GPU link micro-benchmarks (Google Benchmark), timed with CUDA events (manual time):
//   BM_GpuPeerCopy_ce|_sm/<bytes>   GPU 0 -> GPU 1 peer memory, copy engine (cudaMemcpyPeerAsync)
//                                   or SM stores (harness/links/links_kernels.cu)
//   BM_GpuPeerBidir_ce|_sm/<bytes>  both directions at once, bytes of both counted
//   BM_PinnedCopy_d2h|_h2d/<bytes>  GPU 0 <-> pinned host memory
// Each skips with the reason (state.SkipWithError) where the build has no CUDA, there is no GPU,
// fewer than two GPUs, or no peer access. Anchors (2 x H200, NV18; h200x2-20261130-ceilings): copy
// engine 397 GB/s one way, SM 369, both directions 784 / 726, pinned PCIe 55 each way.
#include <algorithm>
#include <string>

#include <benchmark/benchmark.h>

#include "core/build_config.h"

#if CCBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include "harness/links/links_kernels.h"
#endif

namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr int kCopiesPerIteration = 10;  // one event pair brackets this many copies

#if CCBENCH_HAVE_CUDA

// Why GPU 0 and 1 cannot copy peer to peer, or "" (then peer access is enabled both ways).
std::string peer_pair_problem(int needed) {
  int n = 0;
  if (cudaError_t rc = cudaGetDeviceCount(&n); rc != cudaSuccess)
    return std::string("no usable GPU: ") + cudaGetErrorString(rc);
  if (n < needed) return "needs " + std::to_string(needed) + " GPUs, this host has " + std::to_string(n);
  if (needed < 2) return "";
  int a = 0, b = 0;
  cudaDeviceCanAccessPeer(&a, 0, 1);
  cudaDeviceCanAccessPeer(&b, 1, 0);
  if (!a || !b) return "GPU 0 and GPU 1 have no peer access (cudaDeviceCanAccessPeer = 0)";
  cudaSetDevice(0);
  cudaDeviceEnablePeerAccess(1, 0);
  cudaSetDevice(1);
  cudaDeviceEnablePeerAccess(0, 0);
  cudaGetLastError();  // "already enabled" is fine
  return "";
}

struct DeviceBuffers {
  explicit DeviceBuffers(size_t bytes) {
    for (int d = 0; d < 2; ++d) {
      cudaSetDevice(d);
      cudaMalloc(&buf[d][0], bytes);
      cudaMalloc(&buf[d][1], bytes);
      cudaStreamCreateWithFlags(&stream[d], cudaStreamNonBlocking);
      cudaEventCreate(&start[d]);
      cudaEventCreate(&stop[d]);
    }
  }
  ~DeviceBuffers() {
    for (int d = 0; d < 2; ++d) {
      cudaSetDevice(d);
      cudaFree(buf[d][0]);
      cudaFree(buf[d][1]);
      cudaStreamDestroy(stream[d]);
      cudaEventDestroy(start[d]);
      cudaEventDestroy(stop[d]);
    }
  }
  void* buf[2][2] = {};  // [device][0: source, 1: destination]
  cudaStream_t stream[2] = {};
  cudaEvent_t start[2] = {}, stop[2] = {};
};

void copy_on(DeviceBuffers& b, int from, size_t bytes, bool sm) {
  const int to = 1 - from;
  cudaSetDevice(from);
  if (sm) ccbench::links_kernels::sm_copy(b.buf[to][1], b.buf[from][0], bytes, b.stream[from]);
  else cudaMemcpyPeerAsync(b.buf[to][1], to, b.buf[from][0], from, bytes, b.stream[from]);
}

// Times kCopiesPerIteration copies from GPU 0 (and GPU 1 when `both`) per iteration; the slower
// GPU's event time is the iteration's.
void peer_copies(benchmark::State& state, bool sm, bool both) {
  if (std::string why = peer_pair_problem(2); !why.empty()) return state.SkipWithError(why.c_str());
  const auto bytes = static_cast<size_t>(state.range(0));
  DeviceBuffers b(bytes);
  const int sides = both ? 2 : 1;
  for (auto _ : state) {
    for (int d = 0; d < sides; ++d) cudaEventRecord(b.start[d], b.stream[d]);
    for (int i = 0; i < kCopiesPerIteration; ++i)
      for (int d = 0; d < sides; ++d) copy_on(b, d, bytes, sm);
    float slowest = 0;
    for (int d = 0; d < sides; ++d) {
      cudaSetDevice(d);
      cudaEventRecord(b.stop[d], b.stream[d]);
      cudaEventSynchronize(b.stop[d]);
      float ms = 0;
      cudaEventElapsedTime(&ms, b.start[d], b.stop[d]);
      slowest = std::max(slowest, ms);
    }
    if (cudaError_t rc = cudaGetLastError(); rc != cudaSuccess) return state.SkipWithError(cudaGetErrorString(rc));
    state.SetIterationTime(slowest / 1e3);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * kCopiesPerIteration * sides *
                          static_cast<std::int64_t>(bytes));
}

void pinned_copies(benchmark::State& state, bool d2h) {
  if (std::string why = peer_pair_problem(1); !why.empty()) return state.SkipWithError(why.c_str());
  const auto bytes = static_cast<size_t>(state.range(0));
  cudaSetDevice(0);
  void *dev = nullptr, *host = nullptr;
  cudaStream_t s;
  cudaEvent_t start, stop;
  cudaMalloc(&dev, bytes);
  cudaHostAlloc(&host, bytes, cudaHostAllocDefault);
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (auto _ : state) {
    cudaEventRecord(start, s);
    for (int i = 0; i < kCopiesPerIteration; ++i)
      cudaMemcpyAsync(d2h ? host : dev, d2h ? dev : host, bytes, d2h ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, s);
    cudaEventRecord(stop, s);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms / 1e3);
  }
  if (cudaError_t rc = cudaGetLastError(); rc != cudaSuccess) state.SkipWithError(cudaGetErrorString(rc));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * kCopiesPerIteration *
                          static_cast<std::int64_t>(bytes));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(s);
  cudaFreeHost(host);
  cudaFree(dev);
}

#else

void peer_copies(benchmark::State& state, bool, bool) { state.SkipWithError("this build has no CUDA"); }
void pinned_copies(benchmark::State& state, bool) { state.SkipWithError("this build has no CUDA"); }

#endif

void BM_GpuPeerCopy_ce(benchmark::State& s) { peer_copies(s, false, false); }
void BM_GpuPeerCopy_sm(benchmark::State& s) { peer_copies(s, true, false); }
void BM_GpuPeerBidir_ce(benchmark::State& s) { peer_copies(s, false, true); }
void BM_GpuPeerBidir_sm(benchmark::State& s) { peer_copies(s, true, true); }
void BM_PinnedCopy_d2h(benchmark::State& s) { pinned_copies(s, true); }
void BM_PinnedCopy_h2d(benchmark::State& s) { pinned_copies(s, false); }

// 1 GiB as the anchors; 64 MiB shows how close a smaller copy comes.
#define GPU_SIZES ->Arg(64 * kMiB)->Arg(1024 * kMiB)->UseManualTime()->Unit(benchmark::kMillisecond)
BENCHMARK(BM_GpuPeerCopy_ce) GPU_SIZES;
BENCHMARK(BM_GpuPeerCopy_sm) GPU_SIZES;
BENCHMARK(BM_GpuPeerBidir_ce) GPU_SIZES;
BENCHMARK(BM_GpuPeerBidir_sm) GPU_SIZES;
#undef GPU_SIZES
BENCHMARK(BM_PinnedCopy_d2h)->Arg(256 * kMiB)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PinnedCopy_h2d)->Arg(256 * kMiB)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
