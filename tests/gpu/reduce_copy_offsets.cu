// The kernels' data loop (collectives/gpu/device.cuh reduce_copy) at every kind of offset: for
// int8, half, float and double, 1-3 sources into 1-3 destinations, each pointer at its own element
// offset from a 16-byte boundary (equal offsets: the head, vectors and tail; one pointer off, all
// different: the element loop), counts from 0 past several blocks' strides, blocks of 512 threads
// (the kernels') and of 64. Every case is one block of one launch; each output element is
// compared with the sum computed here, and every byte around each destination (32 bytes before,
// the rest of its region after) must keep its fill: a vector stored at the wrong offset, a head or
// tail element written twice or not at all, show as a wrong element or a changed guard byte. Exit
// 0 when every case is exact, 1 with the first failures named, 77 without a GPU.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "collectives/gpu/device.cuh"
#include "core/checks_cuda.h"

namespace {

using namespace ccbench;
using namespace ccbench::gpu;

constexpr int kMaxPtrs = 6;
constexpr std::size_t kGuard = 32;          // bytes of fill before each buffer
constexpr std::uint8_t kFill = 0xA5;
constexpr int kCasesPerConfig = 1500;
const std::size_t kCounts[] = {0, 1, 2, 7, 15, 16, 17, 31, 33, 64, 100, 255, 511, 513, 1029, 2047, 4099, 9001};
constexpr std::size_t kMaxCount = 9001;

struct Case {
  std::size_t n;
  std::size_t at[kMaxPtrs];  // byte position of each pointer in the arena (sources, then destinations)
};

template <typename T, int NS, int ND, bool kShift>
__global__ void cases_kernel(const Case* cases, char* arena) {
  const Case& c = cases[blockIdx.x];
  const void* src[NS];
  void* dst[ND];
#pragma unroll
  for (int s = 0; s < NS; ++s) src[s] = arena + c.at[s];
#pragma unroll
  for (int d = 0; d < ND; ++d) dst[d] = arena + c.at[NS + d];
  reduce_copy<T, NS, ND, kShift>(ReduceOp::sum, false, NS, src, dst, c.n);
}

// Small integers: sums of three are exact in every type here.
template <typename T>
T input(int c, int s, std::size_t i) {
  const int v = static_cast<int>((i * 7 + static_cast<std::size_t>(s) * 13 + static_cast<std::size_t>(c)) % 23);
  if constexpr (is_narrow_float<T>) return T::from_float(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <typename T, int NS>
T expected(int c, std::size_t i) {
  T acc = input<T>(c, 0, i);
  for (int s = 1; s < NS; ++s) acc = reduce_pair<T>(ReduceOp::sum, acc, input<T>(c, s, i));
  return acc;
}

// The cases of one configuration: random offsets (whole elements within a pack) and counts, the
// first cases with every pointer at one offset and with one pointer off, the rest all random.
template <typename T, int NS, int ND>
std::vector<Case> make_cases(std::mt19937& rng, std::size_t region) {
  constexpr int kPtrs = NS + ND, per_pack = kPackBytes / sizeof(T);
  std::vector<Case> cases(kCasesPerConfig);
  for (int c = 0; c < kCasesPerConfig; ++c) {
    Case& k = cases[static_cast<std::size_t>(c)];
    k.n = kCounts[rng() % (sizeof kCounts / sizeof kCounts[0])];
    const int common = static_cast<int>(rng() % per_pack), odd = static_cast<int>(rng() % kPtrs);
    for (int p = 0; p < kPtrs; ++p) {
      int off = static_cast<int>(rng() % per_pack);
      if (c < kCasesPerConfig / 4) off = common;
      else if (c < kCasesPerConfig / 2) off = p == odd ? static_cast<int>(rng() % per_pack) : common;
      k.at[p] = (static_cast<std::size_t>(c) * kPtrs + static_cast<std::size_t>(p)) * region + kGuard +
                static_cast<std::size_t>(off) * sizeof(T);
    }
  }
  return cases;
}

// Runs one configuration at `threads` per block, with the loop of the kernels for aligned buffers
// or (kShift) of those launched for misaligned ones; returns the failures (printing the first).
template <typename T, int NS, int ND, bool kShift>
int run_config(const char* type, int threads, std::mt19937& rng, char* arena, std::size_t arena_bytes) {
  // Regions start on 256-byte boundaries, so an offset within a pack is an offset from alignment.
  const std::size_t region = (kGuard + (kMaxCount + 2 * kPackBytes) * sizeof(T) + kGuard + 255) / 256 * 256;
  std::vector<Case> cases = make_cases<T, NS, ND>(rng, region);
  const std::size_t used = cases.size() * (NS + ND) * region;
  if (used > arena_bytes) throw Error(ExitCode::runtime, "the arena is too small for the cases");
  std::vector<char> host(used, static_cast<char>(kFill));
  for (std::size_t c = 0; c < cases.size(); ++c)
    for (int s = 0; s < NS; ++s)
      for (std::size_t i = 0; i < cases[c].n; ++i) {
        const T v = input<T>(static_cast<int>(c), s, i);
        std::memcpy(host.data() + cases[c].at[s] + i * sizeof(T), &v, sizeof(T));
      }
  CCB_CUDA(cudaMemcpy(arena, host.data(), used, cudaMemcpyHostToDevice));
  Case* dcases;
  CCB_CUDA(cudaMalloc(&dcases, cases.size() * sizeof(Case)));
  CCB_CUDA(cudaMemcpy(dcases, cases.data(), cases.size() * sizeof(Case), cudaMemcpyHostToDevice));
  cases_kernel<T, NS, ND, kShift><<<static_cast<unsigned>(cases.size()), static_cast<unsigned>(threads)>>>(dcases, arena);
  CCB_CUDA(cudaGetLastError());
  CCB_CUDA(cudaDeviceSynchronize());
  std::vector<char> got(used);
  CCB_CUDA(cudaMemcpy(got.data(), arena, used, cudaMemcpyDeviceToHost));
  CCB_CUDA(cudaFree(dcases));
  int failures = 0;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    for (int d = 0; d < ND; ++d) {
      const std::size_t start = (c * (NS + ND) + static_cast<std::size_t>(NS + d)) * region, pos = k.at[NS + d];
      const std::size_t end = pos + k.n * sizeof(T);
      const char* why = nullptr;
      std::size_t where = 0;
      for (std::size_t b = start; b < start + region && !why; ++b)
        if ((b < pos || b >= end) && static_cast<std::uint8_t>(got[b]) != kFill) why = "guard byte changed", where = b - pos;
      for (std::size_t i = 0; i < k.n && !why; ++i) {
        const T want = expected<T, NS>(static_cast<int>(c), i);
        if (std::memcmp(got.data() + pos + i * sizeof(T), &want, sizeof(T)) != 0) why = "wrong element", where = i;
      }
      if (why && failures++ < 5) {
        std::printf("FAIL %s%s %d->%d, %d threads, count %zu, offsets", type, kShift ? " <kShift>" : "", NS, ND, threads,
                    k.n);
        for (int p = 0; p < NS + ND; ++p) std::printf(" %zu", (k.at[p] % kPackBytes) / sizeof(T));
        std::printf(" (elements past 16 B, sources then destinations), destination %d: %s at %s%zu\n", d, why,
                    why[0] == 'g' ? "byte offset " : "element ", where);
      }
    }
  }
  return failures;
}

template <typename T, bool kShift>
int run_shapes(const char* type, int threads, std::mt19937& rng, char* arena, std::size_t bytes) {
  int failures = run_config<T, 1, 1, kShift>(type, threads, rng, arena, bytes);
  failures += run_config<T, 2, 1, kShift>(type, threads, rng, arena, bytes);
  failures += run_config<T, 1, 2, kShift>(type, threads, rng, arena, bytes);
  failures += run_config<T, 2, 2, kShift>(type, threads, rng, arena, bytes);
  return failures + run_config<T, 3, 3, kShift>(type, threads, rng, arena, bytes);
}

template <typename T>
int run_type(const char* type, std::mt19937& rng, char* arena, std::size_t bytes) {
  int failures = 0;
  for (int threads : {512, 64}) {
    failures += run_shapes<T, false>(type, threads, rng, arena, bytes);
    failures += run_shapes<T, true>(type, threads, rng, arena, bytes);
  }
  std::printf("%-6s %d configurations x %d cases: %d failed\n", type, 20, kCasesPerConfig, failures);
  return failures;
}

}  // namespace

int main() try {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no GPU\n");
    return 77;
  }
  const std::size_t bytes = static_cast<std::size_t>(kCasesPerConfig) * kMaxPtrs *
                            ((2 * kGuard + (kMaxCount + 2 * kPackBytes) * sizeof(double) + 255) / 256 * 256);
  char* arena;
  CCB_CUDA(cudaMalloc(&arena, bytes));
  std::mt19937 rng(20261202);
  int failures = run_type<std::int8_t>("int8", rng, arena, bytes);
  failures += run_type<half_t>("half", rng, arena, bytes);
  failures += run_type<float>("float", rng, arena, bytes);
  failures += run_type<double>("double", rng, arena, bytes);
  CCB_CUDA(cudaFree(arena));
  std::printf("reduce_copy offsets: %s\n", failures ? "FAILED" : "every case exact, every guard byte intact");
  return failures ? 1 : 0;
} catch (const ccbench::Error& e) {
  std::printf("error: %s\n", e.what());
  return 1;
}
