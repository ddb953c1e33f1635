// Kernels of the --overlap loads (harness/overlap/overlap.h): the memory-bound load, a copy between two
// buffers in 16-byte vectors, one block per SM, and the fill that gives the GEMM's inputs values that are not zero
// (a GEMM of zeros draws less power and clocks higher than a real one).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "harness/overlap/overlap_kernels.h"

namespace ccbench::overlap {

namespace {

constexpr int kFillThreads = 512;
// Loads in flight per thread: a grid of one block per SM then keeps ~64 KiB per SM in flight,
// more than HBM's bandwidth-latency product (~5 MB over an H200's 132 SMs) asks.
constexpr int kUnroll = 4;

__global__ void __launch_bounds__(kCopyThreads)
    copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

// Values in [-1, 1) from the index: a GEMM's products then stay small and never overflow.
__global__ void fill_kernel(__nv_bfloat16* p, std::size_t n, std::uint32_t salt) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ salt;
    h ^= h >> 15;
    p[i] = __float2bfloat16(static_cast<float>(h & 0xffff) / 32768.0f - 1.0f);
  }
}

}  // namespace

int copy_block_smem(std::size_t* bytes) {
  int device = 0, optin = 0;
  cudaError_t rc = cudaGetDevice(&device);
  if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (rc == cudaSuccess) rc = cudaFuncSetAttribute(copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
  *bytes = static_cast<std::size_t>(optin);
  return rc;
}

int launch_copy(const void* src, void* dst, std::size_t bytes, int blocks, std::size_t smem, void* stream) {
  copy_kernel<<<blocks, kCopyThreads, smem, static_cast<cudaStream_t>(stream)>>>(static_cast<const uint4*>(src),
                                                                                 static_cast<uint4*>(dst), bytes / 16);
  return cudaGetLastError();
}

int fill_bf16(void* p, std::size_t elements, std::uint32_t salt, void* stream) {
  fill_kernel<<<1024, kFillThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<__nv_bfloat16*>(p), elements,
                                                                            salt);
  return cudaGetLastError();
}

}  // namespace ccbench::overlap
