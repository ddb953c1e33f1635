// The data loop of our GPU kernels (collectives/gpu/device.cuh reduce_copy) on one GPU, one
// process: two sources reduced into one destination, 256 MiB per buffer, for int8, half and float,
// and for aligned buffers, buffers equally misaligned (every pointer one element past a 16-byte
// boundary: -u 1, pieces at the same odd offset on both sides) and buffers misaligned differently
// (one source, the output, or all three at different offsets: -u beside aligned FIFO slots).
// Three loops run on the same buffers: reduce_copy as the kernels for aligned buffers hold it
// (buffers misaligned differently go element by element there), reduce_copy<kShift> as the kernels
// launched for misaligned buffers hold it (the shifted path), and the element loop throughout
// (reduce_copy_elems: what misaligned buffers took before either path), so each gain is measured,
// not assumed. Every result is checked.
// Usage: ccbench_reduce_copy_bench [blocks] (default 264, 2 per SM of an H200; the ring kernels run
// one block per channel, 16 by default). Prints one line per case (GB/s moved: two reads and one
// write per element); exit 0 when every result is exact, 1 otherwise, 2 for a bad argument, 77
// without a GPU.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "collectives/gpu/device.cuh"
#include "core/checks_cuda.h"

namespace {

using namespace ccbench;
using namespace ccbench::gpu;

constexpr std::size_t kBytes = 256ull << 20;  // per buffer: well past the 60 MiB L2
constexpr int kDefaultBlocks = 264;            // 2 per SM of an H200
constexpr int kMaxBlocks = 65535;
int blocks = kDefaultBlocks;
constexpr int kThreads = 512;
constexpr int kReps = 20;

// The loops timed: reduce_copy as the kernels for aligned buffers hold it, as the kernels
// launched for misaligned buffers hold it (kShift), and the element loop throughout.
enum Loop { kAligned, kShifted, kElements, kLoops };
const char* const kLoopName[kLoops] = {"reduce_copy", "reduce_copy<kShift>", "elements"};

// Each block reduces its slice.
template <typename T, Loop L>
__global__ void reduce_kernel(const T* a, const T* b, T* out, std::size_t n) {
  const std::size_t per = (n + gridDim.x - 1) / gridDim.x;
  const std::size_t lo = per * blockIdx.x, hi = lo + per < n ? lo + per : n;
  if (lo >= hi) return;
  const void* const src[2] = {a + lo, b + lo};
  void* const dst[1] = {out + lo};
  if constexpr (L == kElements) reduce_copy_elems<T, 2, 1>(ReduceOp::sum, false, 1, src, dst, 0, hi - lo);
  else reduce_copy<T, 2, 1, L == kShifted>(ReduceOp::sum, false, 1, src, dst, hi - lo);
}

template <typename T>
void launch(Loop loop, const T* a, const T* b, T* out, std::size_t n) {
  if (loop == kAligned) reduce_kernel<T, kAligned><<<blocks, kThreads>>>(a, b, out, n);
  else if (loop == kShifted) reduce_kernel<T, kShifted><<<blocks, kThreads>>>(a, b, out, n);
  else reduce_kernel<T, kElements><<<blocks, kThreads>>>(a, b, out, n);
}

// Small values whose sums are exact in every type here.
// which 0, 1: the two sources; 2: their sum.
template <typename T>
T value(std::size_t i, int which) {
  const int x = static_cast<int>((i * 3) % 50);
  const int v = which == 2 ? 2 * x + 1 : x + which;
  if constexpr (sizeof(T) == 1 || std::is_same_v<T, float>) return static_cast<T>(v);
  else return T::from_float(static_cast<float>(v));
}
template <typename T> bool same(T x, T y) { return std::memcmp(&x, &y, sizeof(T)) == 0; }

template <typename T>
bool run_case(const char* type, const char* name, int off_a, int off_b, int off_out, char* a, char* b, char* out) {
  const std::size_t n = kBytes / sizeof(T) - 16;
  T* pa = reinterpret_cast<T*>(a) + off_a;
  T* pb = reinterpret_cast<T*>(b) + off_b;
  T* po = reinterpret_cast<T*>(out) + off_out;
  std::vector<T> ha(n), hb(n), ho(n);
  for (std::size_t i = 0; i < n; ++i) ha[i] = value<T>(i, 0), hb[i] = value<T>(i, 1);
  CCB_CUDA(cudaMemcpy(pa, ha.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CCB_CUDA(cudaMemcpy(pb, hb.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  CCB_CUDA(cudaEventCreate(&t0));
  CCB_CUDA(cudaEventCreate(&t1));
  float ms[kLoops] = {};
  bool ok = true;
  for (int l = 0; l < kLoops; ++l) {
    const Loop loop = static_cast<Loop>(l);
    CCB_CUDA(cudaMemset(po, 0, n * sizeof(T)));
    launch<T>(loop, pa, pb, po, n);  // warm-up, checked below
    CCB_CUDA(cudaEventRecord(t0));
    for (int r = 0; r < kReps; ++r) launch<T>(loop, pa, pb, po, n);
    CCB_CUDA(cudaEventRecord(t1));
    CCB_CUDA(cudaEventSynchronize(t1));
    CCB_CUDA(cudaEventElapsedTime(&ms[l], t0, t1));
    CCB_CUDA(cudaMemcpy(ho.data(), po, n * sizeof(T), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n && ok; ++i)
      if (!same(ho[i], value<T>(i, 2))) {
        std::printf("WRONG %s %s %s: element %zu\n", type, name, kLoopName[l], i);
        ok = false;
      }
  }
  auto gbps = [&](float t) { return 3.0 * n * sizeof(T) * kReps / (t * 1e-3) / 1e9; };
  std::printf("%-6s %-22s reduce_copy %7.0f GB/s   <kShift> %7.0f GB/s   element by element %7.0f GB/s   %5.1fx %5.1fx\n",
              type, name, gbps(ms[kAligned]), gbps(ms[kShifted]), gbps(ms[kElements]), ms[kElements] / ms[kAligned],
              ms[kElements] / ms[kShifted]);
  return ok;
}

template <typename T>
bool run_type(const char* type, char* a, char* b, char* out) {
  bool ok = run_case<T>(type, "aligned", 0, 0, 0, a, b, out);
  ok &= run_case<T>(type, "equally misaligned", 1, 1, 1, a, b, out);
  ok &= run_case<T>(type, "one source misaligned", 1, 0, 0, a, b, out);
  ok &= run_case<T>(type, "output misaligned", 0, 0, 1, a, b, out);
  ok &= run_case<T>(type, "all three differently", 1, 3, 6, a, b, out);
  return ok;
}

void print_grid() { std::printf("%d blocks of %d threads\n", blocks, kThreads); }

}  // namespace

int main(int argc, char** argv) try {
  if (argc > 1) {
    char* end = nullptr;
    const long b = std::strtol(argv[1], &end, 10);
    if (argc > 2 || *end != '\0' || b < 1 || b > kMaxBlocks) {
      std::printf("usage: %s [blocks]: blocks is a whole number from 1 to %d (default %d)\n", argv[0], kMaxBlocks,
                  kDefaultBlocks);
      return 2;
    }
    blocks = static_cast<int>(b);
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no GPU\n");
    return 77;
  }
  char *a, *b, *out;
  CCB_CUDA(cudaMalloc(&a, kBytes));
  CCB_CUDA(cudaMalloc(&b, kBytes));
  CCB_CUDA(cudaMalloc(&out, kBytes));
  print_grid();
  bool ok = run_type<std::int8_t>("int8", a, b, out);
  ok &= run_type<half_t>("half", a, b, out);
  ok &= run_type<float>("float", a, b, out);
  std::printf("reduce_copy bench: %s\n", ok ? "every result exact" : "WRONG results");
  return ok ? 0 : 1;
} catch (const ccbench::Error& e) {
  std::printf("error: %s\n", e.what());
  return 1;
}
