// Kernels of the --overlap loads (harness/overlap.h): the memory-bound load, a copy between two
// buffers in 16-byte vectors on every SM, and the fill that gives the GEMM's inputs values that
// are not zero (a GEMM of zeros draws less power and clocks higher than a real one).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "harness/overlap_kernels.h"

namespace ccbench::overlap {

namespace {

constexpr int kThreads = 512;

__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// Values in [-1, 1) from the index: a GEMM's products then stay small and never overflow.
__global__ void fill_kernel(__nv_bfloat16* p, std::size_t n, std::uint32_t salt) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ salt;
    h ^= h >> 15;
    p[i] = __float2bfloat16(static_cast<float>(h & 0xffff) / 32768.0f - 1.0f);
  }
}

}  // namespace

int launch_copy(const void* src, void* dst, std::size_t bytes, int blocks, void* stream) {
  copy_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const uint4*>(src),
                                                                           static_cast<uint4*>(dst), bytes / 16);
  return cudaGetLastError();
}

int fill_bf16(void* p, std::size_t elements, std::uint32_t salt, void* stream) {
  fill_kernel<<<1024, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<__nv_bfloat16*>(p), elements, salt);
  return cudaGetLastError();
}

}  // namespace ccbench::overlap
