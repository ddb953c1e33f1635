// Kernels of `ccbench links`: a peer copy with SM stores, and a flag ping-pong (latency).
#include <algorithm>

#include <cuda_runtime.h>

#include "harness/links/links_kernels.h"

namespace ccbench::links_kernels {

namespace {

// Grid-stride copy: 16-byte vectors, then the tail byte by byte.
__global__ void sm_copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, size_t vectors, char* dst_tail,
                               const char* src_tail, size_t tail) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride) dst[i] = src[i];
  if (blockIdx.x == 0 && threadIdx.x < tail) dst_tail[threadIdx.x] = src_tail[threadIdx.x];
}

__global__ void byte_copy_kernel(char* dst, const char* src, size_t bytes) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes; i += stride) dst[i] = src[i];
}

// One thread: volatile system-scope stores and loads, fenced so the peer sees each round.
__global__ void ping_pong_kernel(volatile uint32_t* mine, volatile uint32_t* peer, int rounds, bool initiator,
                                 unsigned long long spin_limit, int* timed_out) {
  for (int r = 1; r <= rounds; ++r) {
    if (initiator) {
      *peer = r;
      __threadfence_system();
    }
    unsigned long long spins = 0;
    while (*mine < static_cast<uint32_t>(r)) {
      if (++spins > spin_limit) {
        *timed_out = 1;
        return;
      }
    }
    if (!initiator) {
      *peer = r;
      __threadfence_system();
    }
  }
}

// Enough blocks to keep every SM's copy pipes busy on NVLink (a few per SM), measured with
// 1 GiB copies on H200; more do not raise the rate.
constexpr int kThreads = 512;
constexpr int kMaxBlocks = 132 * 4;

}  // namespace

int sm_copy(void* dst, const void* src, size_t bytes, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  const bool aligned = (reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) % 16 == 0;
  if (!aligned) {
    const int blocks = static_cast<int>(std::min<size_t>(kMaxBlocks, (bytes + kThreads - 1) / kThreads + 1));
    byte_copy_kernel<<<blocks, kThreads, 0, s>>>(static_cast<char*>(dst), static_cast<const char*>(src), bytes);
    return static_cast<int>(cudaGetLastError());
  }
  const size_t vectors = bytes / 16, tail = bytes % 16;
  const int blocks = static_cast<int>(std::min<size_t>(kMaxBlocks, (vectors + kThreads - 1) / kThreads + 1));
  sm_copy_kernel<<<blocks, kThreads, 0, s>>>(static_cast<uint4*>(dst), static_cast<const uint4*>(src), vectors,
                                             static_cast<char*>(dst) + vectors * 16,
                                             static_cast<const char*>(src) + vectors * 16, tail);
  return static_cast<int>(cudaGetLastError());
}

int ping_pong(volatile uint32_t* my_flag, volatile uint32_t* peer_flag, int rounds, bool initiator,
              unsigned long long spin_limit, int* timed_out, void* stream) {
  ping_pong_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(my_flag, peer_flag, rounds, initiator, spin_limit,
                                                                   timed_out);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace ccbench::links_kernels
