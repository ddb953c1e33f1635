// Pattern and check kernels: the same functions as the CPU (collectives/verifiable.h), one
// grid-stride loop each.
#include <cuda_runtime.h>

#include "collectives/verifiable.h"
#include "harness/engine/gpu_check.h"

namespace ccbench::gpu_check {

namespace {

constexpr int kThreads = 512;

unsigned blocks_for(std::size_t n) {
  std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

template <typename T>
__global__ void fill_input_kernel(PatternSpec s, T* dst, std::size_t n, std::uint64_t base) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = collective_input<T>(s.coll, s.op, s.seed, s.rank, base + i, s.nranks, s.pattern);
}

template <typename T>
__global__ void fill_expected_kernel(PatternSpec s, T* dst, std::size_t n) {
  for (std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; j < n;
       j += std::size_t(gridDim.x) * blockDim.x)
    dst[j] = collective_expected<T>(s.coll, s.op, s.seed, s.rank, s.nranks, s.root, s.count, j, s.pattern);
}

__device__ void record_wrong(unsigned long long* result, unsigned long long wrong_here, unsigned long long first) {
  if (wrong_here) {
    atomicAdd(&result[0], wrong_here);
    atomicMin(&result[1], first);
  }
}

template <typename T>
__global__ void compare_kernel(PatternSpec s, const T* e, const T* a, std::size_t n, unsigned long long* result) {
  unsigned long long wrong = 0, first = ~0ull;
  const ReduceOp op = has_reduce_op(s.coll) ? s.op : ReduceOp::none;  // data movement: bit for bit
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    if (!value_matches<T>(op, e[i], a[i], s.nranks)) {
      if (!wrong) first = i;
      ++wrong;
    }
  }
  record_wrong(result, wrong, first);
}

template <typename T>
__global__ void check_input_kernel(PatternSpec s, const T* a, std::size_t n, std::uint64_t base,
                                   unsigned long long* result) {
  unsigned long long wrong = 0, first = ~0ull;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    T e = collective_input<T>(s.coll, s.op, s.seed, s.rank, base + i, s.nranks, s.pattern);
    const unsigned char* pe = reinterpret_cast<const unsigned char*>(&e);
    const unsigned char* pa = reinterpret_cast<const unsigned char*>(&a[i]);
    bool same = true;
    for (unsigned k = 0; k < sizeof(T); ++k) same &= pe[k] == pa[k];
    if (!same) {
      if (!wrong) first = i;
      ++wrong;
    }
  }
  record_wrong(result, wrong, first);
}

__global__ void complement_kernel(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = static_cast<std::uint8_t>(~src[i]);
}

__global__ void count_bytes_kernel(const std::uint8_t* p, std::size_t n, std::uint8_t v, unsigned long long* result) {
  unsigned long long wrong = 0, first = ~0ull;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (p[i] != v) {
      if (!wrong) first = i;
      ++wrong;
    }
  record_wrong(result, wrong, first);
}

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

cudaStream_t st(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace

int fill_input(const PatternSpec& spec, void* dst, std::size_t n, std::uint64_t base, void* stream) {
  if (n == 0) return 0;
  dispatch_type(spec.dtype, [&](auto t) {
    using T = decltype(t);
    fill_input_kernel<T><<<blocks_for(n), kThreads, 0, st(stream)>>>(spec, static_cast<T*>(dst), n, base);
  });
  return cudaGetLastError();
}

int fill_expected(const PatternSpec& spec, void* dst, std::size_t n, void* stream) {
  if (n == 0) return 0;
  dispatch_type(spec.dtype, [&](auto t) {
    using T = decltype(t);
    fill_expected_kernel<T><<<blocks_for(n), kThreads, 0, st(stream)>>>(spec, static_cast<T*>(dst), n);
  });
  return cudaGetLastError();
}

int complement(void* dst, const void* src, std::size_t bytes, void* stream) {
  if (bytes == 0) return 0;
  complement_kernel<<<blocks_for(bytes), kThreads, 0, st(stream)>>>(static_cast<std::uint8_t*>(dst),
                                                                    static_cast<const std::uint8_t*>(src), bytes);
  return cudaGetLastError();
}

int compare(const PatternSpec& spec, const void* expected, const void* actual, std::size_t n,
            unsigned long long* result, void* stream) {
  if (n == 0) return 0;
  dispatch_type(spec.dtype, [&](auto t) {
    using T = decltype(t);
    compare_kernel<T><<<blocks_for(n), kThreads, 0, st(stream)>>>(spec, static_cast<const T*>(expected),
                                                                  static_cast<const T*>(actual), n, result);
  });
  return cudaGetLastError();
}

int check_input(const PatternSpec& spec, const void* buf, std::size_t n, std::uint64_t base, unsigned long long* result,
                void* stream) {
  if (n == 0) return 0;
  dispatch_type(spec.dtype, [&](auto t) {
    using T = decltype(t);
    check_input_kernel<T>
        <<<blocks_for(n), kThreads, 0, st(stream)>>>(spec, static_cast<const T*>(buf), n, base, result);
  });
  return cudaGetLastError();
}

int count_bytes_not(const void* p, std::size_t bytes, std::uint8_t value, unsigned long long* result, void* stream) {
  if (bytes == 0) return 0;
  count_bytes_kernel<<<blocks_for(bytes), kThreads, 0, st(stream)>>>(static_cast<const std::uint8_t*>(p), bytes, value,
                                                                     result);
  return cudaGetLastError();
}

int spin(unsigned long long ns, void* stream) {
  spin_kernel<<<1, 1, 0, st(stream)>>>(ns);
  return cudaGetLastError();
}

}  // namespace ccbench::gpu_check
