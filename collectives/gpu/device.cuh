#pragma once
// Device primitives shared by the CUDA kernels: system-scope flags, bounded waits, 16-byte
// vector loads and stores, element-wise reduction of packs, and a block-wide reduce/copy loop.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "collectives/gpu/kernel_args.h"
#include "collectives/numeric.h"

namespace ccbench::gpu {

// ---- flags (64-bit counters that only grow) ----------------------------------------------------

__device__ __forceinline__ std::uint64_t ld_acquire_sys(const volatile std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void st_release_sys(volatile std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Records the first device-side failure where the host reads it (host-mapped memory).
__device__ __forceinline__ void report_timeout(const WaitLimits& w, int what, int peer, std::uint64_t target,
                                               std::uint64_t seen) {
  if (atomicCAS(&w.error->code, 0, kDeviceTimeout) == 0) {
    w.error->block = static_cast<int>(blockIdx.x);
    w.error->what = what;
    w.error->peer = peer;
    w.error->target = target;
    w.error->seen = seen;
    __threadfence_system();
  }
}

// Spins (one thread) until *flag >= target. Gives up after w.timeout_ns, or at once when another
// block already failed, and returns false.
__device__ __forceinline__ bool wait_at_least(const volatile std::uint64_t* flag, std::uint64_t target,
                                              const WaitLimits& w, int what, int peer) {
  std::uint64_t v = ld_acquire_sys(flag);
  if (v >= target) return true;
  const std::uint64_t start = global_timer_ns();
  for (unsigned spins = 1;; ++spins) {
    v = ld_acquire_sys(flag);
    if (v >= target) return true;
    if ((spins & 1023u) == 0) {
      if (*reinterpret_cast<volatile int*>(&w.error->code) != 0) return false;
      if (global_timer_ns() - start > w.timeout_ns) {
        report_timeout(w, what, peer, target, v);
        return false;
      }
    }
  }
}

// Block-wide: thread 0 waits, then every thread learns whether the wait succeeded.
__device__ __forceinline__ bool block_wait(const volatile std::uint64_t* flag, std::uint64_t target,
                                           const WaitLimits& w, int what, int peer) {
  __shared__ int ok;
  if (threadIdx.x == 0) ok = wait_at_least(flag, target, w, what, peer);
  __syncthreads();
  return ok;
}

// ---- packs --------------------------------------------------------------------------------

using Pack = uint4;  // 16 bytes
constexpr int kPackBytes = 16;

// ---- accumulating several inputs -----------------------------------------------------------
// Narrow floats (half, bfloat16, fp8) accumulate in float over every input of one pass and are
// rounded once at the end (result_of: fp8 through half), as NCCL's symmetric kernels sum half,
// bfloat16 and fp8 in float (src/device/symmetric/primitives.cuh, ncclSymkAccumType); other types
// accumulate in their own type (reduce_pair). With two inputs, one rounding is exactly
// reduce_pair, so a ring step reduces bit for bit as NCCL's pairwise kernels do.
template <typename T>
using Acc = std::conditional_t<is_narrow_float<T>, float, T>;

template <typename T>
__device__ __forceinline__ Acc<T> widen(T x) {
  if constexpr (is_narrow_float<T>) return x.to_float();
  else return x;
}

template <typename T>
__device__ __forceinline__ Acc<T> combine(ReduceOp op, Acc<T> a, Acc<T> b) {
  if constexpr (is_narrow_float<T>) {
    switch (op) {
      case ReduceOp::prod: return a * b;
      case ReduceOp::min: return narrow_minmax<false>(a, b);
      case ReduceOp::max: return narrow_minmax<true>(a, b);
      default: return a + b;
    }
  } else {
    return reduce_pair<T>(op, a, b);
  }
}

// The accumulated value as an element, divided by nranks first for avg when `final`.
template <typename T>
__device__ __forceinline__ T narrow(ReduceOp op, Acc<T> a, bool final, int nranks) {
  if constexpr (is_narrow_float<T>) {
    if (final && op == ReduceOp::avg) a = a / static_cast<float>(nranks);
    return result_of<T>(a);
  } else {
    return final ? finalize<T>(op, a, nranks) : a;
  }
}

// BYTES bytes of elements (a 16-byte pack, an 8-byte word), accumulated.
template <typename T, int BYTES>
struct Accumulator {
  static constexpr int k = BYTES / sizeof(T);
  Acc<T> v[k];
  __device__ __forceinline__ void set(const void* bytes) {
    T x[k];
    memcpy(x, bytes, BYTES);
#pragma unroll
    for (int i = 0; i < k; ++i) v[i] = widen<T>(x[i]);
  }
  __device__ __forceinline__ void add(ReduceOp op, const void* bytes) {
    T x[k];
    memcpy(x, bytes, BYTES);
#pragma unroll
    for (int i = 0; i < k; ++i) v[i] = combine<T>(op, v[i], widen<T>(x[i]));
  }
  __device__ __forceinline__ void get(void* bytes, ReduceOp op, bool final, int nranks) const {
    T x[k];
#pragma unroll
    for (int i = 0; i < k; ++i) x[i] = narrow<T>(op, v[i], final, nranks);
    memcpy(bytes, x, BYTES);
  }
};

// Whether a pass changes the data: more than one input, or avg's division. A single input
// otherwise is copied bit for bit, never converted.
__device__ __forceinline__ bool reduces(int nsrc, ReduceOp op, bool final) {
  return nsrc > 1 || (final && op == ReduceOp::avg);
}

__device__ __forceinline__ Pack load_pack(const void* p) {
  Pack v;
  asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
// One element through ld.volatile (never a stale L1 line of memory another GPU wrote).
template <typename T>
__device__ __forceinline__ T load_elem(const void* p) {
  T v;
  if constexpr (sizeof(T) == 1) {
    unsigned short x;
    asm volatile("ld.volatile.global.u8 %0, [%1];" : "=h"(x) : "l"(p));
    unsigned char c = static_cast<unsigned char>(x);
    memcpy(&v, &c, 1);
  } else if constexpr (sizeof(T) == 2) {
    unsigned short x;
    asm volatile("ld.volatile.global.u16 %0, [%1];" : "=h"(x) : "l"(p));
    memcpy(&v, &x, 2);
  } else if constexpr (sizeof(T) == 4) {
    unsigned x;
    asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(x) : "l"(p));
    memcpy(&v, &x, 4);
  } else {
    unsigned long long x;
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(x) : "l"(p));
    memcpy(&v, &x, 8);
  }
  return v;
}

__device__ __forceinline__ void store_pack(void* p, Pack v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// ---- the block-wide data loop -------------------------------------------------------------

// Elements [lo, hi) of reduce_copy, one at a time (volatile loads: see load_elem).
template <typename T, int NSRC, int NDST>
__device__ __forceinline__ void reduce_copy_elems(ReduceOp op, bool final, int nranks, const void* const (&src)[NSRC],
                                                  void* const (&dst)[NDST], std::size_t lo, std::size_t hi) {
  const bool convert = reduces(NSRC, op, final);
  for (std::size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    T out = load_elem<T>(static_cast<const T*>(src[0]) + i);
    if (convert) {
      Acc<T> acc = widen<T>(out);
#pragma unroll
      for (int s = 1; s < NSRC; ++s)
        acc = combine<T>(op, acc, widen<T>(load_elem<T>(static_cast<const T*>(src[s]) + i)));
      out = narrow<T>(op, acc, final, nranks);
    }
#pragma unroll
    for (int d = 0; d < NDST; ++d) static_cast<T*>(dst[d])[i] = out;
  }
}

// One pack: the sources' packs at `p` reduced (or the first copied), stored to every output.
template <typename T, int NSRC, int NDST, int UNROLL>
__device__ __forceinline__ void reduce_copy_step(ReduceOp op, bool final, int nranks, bool convert,
                                                 const Pack* const (&in)[NSRC], Pack* const (&out)[NDST], std::size_t p,
                                                 std::size_t stride) {
  Pack v[NSRC][UNROLL];
  // Every load in flight before the first use.
#pragma unroll
  for (int s = 0; s < NSRC; ++s)
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[s][u] = load_pack(in[s] + p + u * stride);
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    Pack r = v[0][u];
    if (convert) {
      Accumulator<T, kPackBytes> acc;
      acc.set(&v[0][u]);
#pragma unroll
      for (int s = 1; s < NSRC; ++s) acc.add(op, &v[s][u]);
      acc.get(&r, op, final, nranks);
    }
#pragma unroll
    for (int d = 0; d < NDST; ++d) store_pack(out[d] + p + u * stride, r);
  }
}

// `packs` 16-byte packs of reduce_copy from element `first` on, where every pointer is aligned.
template <typename T, int NSRC, int NDST>
__device__ __forceinline__ void reduce_copy_packs(ReduceOp op, bool final, int nranks, const void* const (&src)[NSRC],
                                                  void* const (&dst)[NDST], std::size_t first, std::size_t packs) {
  const std::size_t nt = blockDim.x;
  const Pack* in[NSRC];
  Pack* out[NDST];
#pragma unroll
  for (int s = 0; s < NSRC; ++s) in[s] = reinterpret_cast<const Pack*>(static_cast<const T*>(src[s]) + first);
#pragma unroll
  for (int d = 0; d < NDST; ++d) out[d] = reinterpret_cast<Pack*>(static_cast<T*>(dst[d]) + first);
  const bool convert = reduces(NSRC, op, final);
  constexpr int kUnroll = 4;  // independent loads per source in flight
  std::size_t p = threadIdx.x;
  for (; p + (kUnroll - 1) * nt < packs; p += nt * kUnroll)
    reduce_copy_step<T, NSRC, NDST, kUnroll>(op, final, nranks, convert, in, out, p, nt);
  for (; p < packs; p += nt) reduce_copy_step<T, NSRC, NDST, 1>(op, final, nranks, convert, in, out, p, nt);
}

// ---- pointers misaligned differently ------------------------------------------------------
// Vectors aligned on dst[0]. A source at another offset is assembled from the two aligned packs
// its 16 bytes straddle: the lane's own and its right neighbour's, through a shuffle, so every
// pack crosses the link once (the lane at the end of a warp's run loads its second pack itself).
// A destination at another offset gets each aligned pack from two neighbouring lanes' results;
// at the ends of a warp's run the two lanes concerned each store their part of the shared pack.

// Bytes [sh, sh + 16) of the 32 bytes lo|hi, for 0 <= sh < 16.
__device__ __forceinline__ Pack shift_pack(Pack lo, Pack hi, unsigned sh) {
  const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const unsigned q = sh / 4, bits = 8 * (sh % 4);
  unsigned v[5];
#pragma unroll
  for (int j = 0; j < 5; ++j) v[j] = q == 0 ? w[j] : q == 1 ? w[j + 1] : q == 2 ? w[j + 2] : w[j + 3];
  return Pack{__funnelshift_r(v[0], v[1], bits), __funnelshift_r(v[1], v[2], bits), __funnelshift_r(v[2], v[3], bits),
              __funnelshift_r(v[3], v[4], bits)};
}

// The next lane's pack (every lane of the warp must call it).
__device__ __forceinline__ Pack shfl_down_pack(Pack v) {
  constexpr unsigned kAll = 0xffffffffu;
  return Pack{__shfl_down_sync(kAll, v.x, 1), __shfl_down_sync(kAll, v.y, 1), __shfl_down_sync(kAll, v.z, 1),
              __shfl_down_sync(kAll, v.w, 1)};
}

// Bytes [from, to) of `v` into the aligned pack at `p`, where one end is 0 or 16: each piece the
// largest naturally aligned size that fits, so at most four stores.
__device__ __forceinline__ void store_part(Pack* p, Pack v, unsigned from, unsigned to) {
  unsigned char b[kPackBytes];
  memcpy(b, &v, kPackBytes);
  unsigned char* out = reinterpret_cast<unsigned char*>(p);
  while (from < to) {
    unsigned size = 8;
    while (from % size != 0 || from + size > to) size /= 2;
    if (size == 8) {
      std::uint64_t x;
      memcpy(&x, b + from, 8);
      *reinterpret_cast<std::uint64_t*>(out + from) = x;
    } else if (size == 4) {
      std::uint32_t x;
      memcpy(&x, b + from, 4);
      *reinterpret_cast<std::uint32_t*>(out + from) = x;
    } else if (size == 2) {
      std::uint16_t x;
      memcpy(&x, b + from, 2);
      *reinterpret_cast<std::uint16_t*>(out + from) = x;
    } else out[from] = b[from];
    from += size;
  }
}

// A pointer `first` elements on, as its aligned pack and its byte offset within it.
struct Shifted {
  Pack* pack;
  unsigned sh;
};
template <typename T>
__device__ __forceinline__ Shifted shifted(const void* base, std::size_t first) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(static_cast<const T*>(base) + first);
  const unsigned sh = static_cast<unsigned>(a & (kPackBytes - 1));
  return Shifted{reinterpret_cast<Pack*>(a - sh), sh};
}

// Stores result `r` of pack p (lane `lane`, `edge` when its right neighbour holds no pack of this
// run) to a destination `sh` bytes past its aligned packs: r is the end of pack p and the start of
// pack p + 1. Every lane of the warp calls it; `live` lanes store.
__device__ __forceinline__ void store_shifted(Pack* out, unsigned sh, Pack r, std::size_t p, bool live, bool edge,
                                              unsigned lane) {
  if (sh == 0) {
    if (live) store_pack(out + p, r);
    return;
  }
  const Pack next = shfl_down_pack(r);
  if (!live) return;
  if (lane == 0) store_part(out + p, shift_pack(Pack{}, r, kPackBytes - sh), sh, kPackBytes);
  if (edge) store_part(out + p + 1, shift_pack(r, Pack{}, kPackBytes - sh), 0, sh);
  else store_pack(out + p + 1, shift_pack(r, next, kPackBytes - sh));
}

// `packs` packs of reduce_copy from element `first` on, where dst[0] + first is aligned and every
// other pointer may lie at any element offset. Every thread of the block takes part, blockDim.x a
// multiple of 32: warps move through runs of 32 packs in step (warp-uniform bounds). Not inlined:
// one copy per type and shape rather than one per call site (the ring and tree kernels took 4x
// as long to compile with it inlined). Only kernels launched for misaligned buffers reach it
// (reduce_copy's kShift): beside the aligned loop in one kernel it cost that loop 11-28 %.
template <typename T, int NSRC, int NDST>
__device__ __noinline__ void reduce_copy_shifted(ReduceOp op, bool final, int nranks, const void* const (&src)[NSRC],
                                                 void* const (&dst)[NDST], std::size_t first, std::size_t packs) {
  constexpr int kUnroll = 1;
  Shifted in[NSRC], out[NDST];
#pragma unroll
  for (int s = 0; s < NSRC; ++s) in[s] = shifted<T>(src[s], first);
#pragma unroll
  for (int d = 0; d < NDST; ++d) out[d] = shifted<T>(dst[d], first);
  const bool convert = reduces(NSRC, op, final);
  const unsigned lane = threadIdx.x % 32;
  const std::size_t run = 32, step = blockDim.x / 32 * run;
  for (std::size_t base = threadIdx.x / 32 * run; base < packs; base += kUnroll * step) {
    Pack lo[kUnroll][NSRC], hi[kUnroll][NSRC];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t p = base + u * step + lane;
      const bool live = p < packs, edge = lane == 31 || p + 1 == packs;
#pragma unroll
      for (int s = 0; s < NSRC; ++s) {
        lo[u][s] = live ? load_pack(in[s].pack + p) : Pack{};
        hi[u][s] = live && edge && in[s].sh ? load_pack(in[s].pack + p + 1) : Pack{};
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t p = base + u * step + lane;
      const bool live = p < packs, edge = lane == 31 || p + 1 == packs;
      Pack v[NSRC];
#pragma unroll
      for (int s = 0; s < NSRC; ++s) {
        v[s] = lo[u][s];
        if (in[s].sh) {
          const Pack next = shfl_down_pack(lo[u][s]);
          v[s] = shift_pack(lo[u][s], edge ? hi[u][s] : next, in[s].sh);
        }
      }
      Pack r = v[0];
      if (convert) {
        Accumulator<T, kPackBytes> acc;
        acc.set(&v[0]);
#pragma unroll
        for (int s = 1; s < NSRC; ++s) acc.add(op, &v[s]);
        acc.get(&r, op, final, nranks);
      }
#pragma unroll
      for (int d = 0; d < NDST; ++d) store_shifted(out[d].pack, out[d].sh, r, p, live, edge, lane);
    }
  }
}

// reduce_copy for pointers misaligned differently: the head up to dst[0]'s 16-byte boundary
// element by element, then reduce_copy_shifted, then the tail; element by element where a pointer
// is not even element-aligned or the block is not whole warps.
template <typename T, int NSRC, int NDST>
__device__ __forceinline__ void reduce_copy_any(ReduceOp op, bool final, int nranks, const void* const (&src)[NSRC],
                                                void* const (&dst)[NDST], std::size_t n) {
  bool whole = blockDim.x % 32 == 0;
#pragma unroll
  for (int s = 0; s < NSRC; ++s) whole &= reinterpret_cast<std::uintptr_t>(src[s]) % sizeof(T) == 0;
#pragma unroll
  for (int d = 0; d < NDST; ++d) whole &= reinterpret_cast<std::uintptr_t>(dst[d]) % sizeof(T) == 0;
  if (!whole) return reduce_copy_elems<T>(op, final, nranks, src, dst, 0, n);
  constexpr std::size_t per_pack = kPackBytes / sizeof(T);
  const std::uintptr_t skew = reinterpret_cast<std::uintptr_t>(dst[0]) & (kPackBytes - 1);
  const std::size_t head = skew ? min(n, (kPackBytes - skew) / sizeof(T)) : 0;
  const std::size_t packs = (n - head) / per_pack;
  reduce_copy_elems<T>(op, final, nranks, src, dst, 0, head);
  if constexpr (NSRC == 1) {
    // A copy moves bytes whatever the type: one instantiation serves every type (compile time).
    if (!reduces(NSRC, op, final))
      reduce_copy_shifted<unsigned char>(ReduceOp::sum, false, nranks, src, dst, head * sizeof(T), packs);
    else reduce_copy_shifted<T>(op, final, nranks, src, dst, head, packs);
  } else {
    reduce_copy_shifted<T>(op, final, nranks, src, dst, head, packs);
  }
  reduce_copy_elems<T>(op, final, nranks, src, dst, head + packs * per_pack, n);
}

// dst[d][i] = finalize(src[0][i] op src[1][i] op ...) for i < n, for every destination d.
// NSRC sources are reduced in order; `final` applies avg's division. All threads of the block
// take part. 16-byte vectors wherever every pointer can use them: when all pointers are equally
// misaligned (buffers offset by -u; pieces at the same odd offset on both sides) the head up to
// the first 16-byte boundary goes element by element, then vectors, then the tail. Pointers
// misaligned differently (-u buffers beside aligned FIFO slots) take reduce_copy_shifted in
// kernels instantiated with kShift (launched where the host sees a misaligned buffer or piece),
// and go element by element in the others, whose code stays that of the aligned loop alone.
template <typename T, int NSRC, int NDST, bool kShift = false>
__device__ __forceinline__ void reduce_copy(ReduceOp op, bool final, int nranks, const void* const (&src)[NSRC],
                                            void* const (&dst)[NDST], std::size_t n) {
  const std::uintptr_t skew = reinterpret_cast<std::uintptr_t>(src[0]) & (kPackBytes - 1);
  bool same = skew % sizeof(T) == 0;
#pragma unroll
  for (int s = 1; s < NSRC; ++s) same &= (reinterpret_cast<std::uintptr_t>(src[s]) & (kPackBytes - 1)) == skew;
#pragma unroll
  for (int d = 0; d < NDST; ++d) same &= (reinterpret_cast<std::uintptr_t>(dst[d]) & (kPackBytes - 1)) == skew;
  if (!same) {
    if constexpr (kShift) return reduce_copy_any<T>(op, final, nranks, src, dst, n);
    else return reduce_copy_elems<T>(op, final, nranks, src, dst, 0, n);
  }
  constexpr std::size_t per_pack = kPackBytes / sizeof(T);
  const std::size_t head = skew ? min(n, (kPackBytes - skew) / sizeof(T)) : 0;
  const std::size_t packs = (n - head) / per_pack;
  reduce_copy_elems<T>(op, final, nranks, src, dst, 0, head);
  reduce_copy_packs<T>(op, final, nranks, src, dst, head, packs);
  reduce_copy_elems<T>(op, final, nranks, src, dst, head + packs * per_pack, n);
}

}  // namespace ccbench::gpu
