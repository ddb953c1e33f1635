#include "tests/gpu/spin_grid.h"

namespace spin {

namespace {

constexpr int kLive = 56;  // values live across the wait: with the loop's own, ptxas gives 64 registers

__global__ void __launch_bounds__(kSpinThreads, 1)
    spin_kernel(unsigned target, unsigned* counter, int* timed_out, long long timeout_cycles, float seed) {
  // Values every thread keeps live across the wait, so that ptxas gives the block a whole SM's
  // registers; written out where they can never land (seed is never negative).
  float live[kLive];
#pragma unroll
  for (int i = 0; i < kLive; ++i) live[i] = seed * (i + threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(counter, 1u);
    const long long start = clock64();
    while (atomicAdd(counter, 0u) < target) {
      if (clock64() - start > timeout_cycles) {
        atomicExch(timed_out, 1);
        break;
      }
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kLive; ++i) live[i] = live[i] * live[(i + 1) % kLive] + 1.0f;
  float sum = 0;
#pragma unroll
  for (int i = 0; i < kLive; ++i) sum += live[i];
  if (seed < 0) timed_out[1 + threadIdx.x] = static_cast<int>(sum);
}

}  // namespace

int registers() {
  cudaFuncAttributes a{};
  return cudaFuncGetAttributes(&a, spin_kernel) == cudaSuccess ? a.numRegs : 0;
}

cudaError_t launch(int blocks, int round, unsigned* counter, int* timed_out, long long timeout_cycles,
                   cudaStream_t stream) {
  const unsigned target = static_cast<unsigned>(blocks) * static_cast<unsigned>(round + 1);
  spin_kernel<<<blocks, kSpinThreads, 0, stream>>>(target, counter, timed_out, timeout_cycles, 1.0f);
  return cudaGetLastError();
}

}  // namespace spin
