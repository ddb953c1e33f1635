#include "collectives/cpu/reduce_kernels.h"

#include <algorithm>
#include <cstring>

#include "collectives/cpu/fp8_kernels.h"
#include "collectives/cpu/narrow_convert.h"
#include "collectives/cpu/narrow_lanes.h"
#include "collectives/numeric.h"
#include "core/error.h"

namespace ccbench {

namespace {

// One pass: each block of elements is reduced into a small local buffer, then stored to every
// output. The local buffer cannot alias anything, so the loops vectorise without run-time alias
// checks, and an output equal to an input is safe.
template <typename T, ReduceOp OP, int NS, int ND, bool FIN>
void reduce_loop(void* const* dstv, const void* const* srcv, size_t n, int nranks) {
  constexpr size_t kBlock = 4096 / sizeof(T);
  alignas(64) T tmp[kBlock];
  const T* s[NS];
  for (int k = 0; k < NS; ++k) s[k] = static_cast<const T*>(srcv[k]);
  T* d[ND];
  for (int k = 0; k < ND; ++k) d[k] = static_cast<T*>(dstv[k]);
  for (size_t i0 = 0; i0 < n; i0 += kBlock) {
    const size_t m = std::min(kBlock, n - i0);
    const T* a = s[0] + i0;
    if constexpr (NS == 1) {
      std::memcpy(tmp, a, m * sizeof(T));
    } else {
      const T* b = s[1] + i0;
      for (size_t i = 0; i < m; ++i) tmp[i] = reduce_pair<T>(OP, a[i], b[i]);
      for (int k = 2; k < NS; ++k) {
        const T* c = s[k] + i0;
        for (size_t i = 0; i < m; ++i) tmp[i] = reduce_pair<T>(OP, tmp[i], c[i]);
      }
    }
    if constexpr (FIN)
      for (size_t i = 0; i < m; ++i) tmp[i] = finalize<T>(ReduceOp::avg, tmp[i], nranks);
    for (int k = 0; k < ND; ++k) std::memcpy(d[k] + i0, tmp, m * sizeof(T));
  }
}

// a (op) b in float, as reduce_pair computes for narrow floats before rounding.
template <ReduceOp OP>
inline float float_op(float a, float b) {
  if constexpr (OP == ReduceOp::prod) return a * b;
  else if constexpr (OP == ReduceOp::min) return narrow_minmax<false>(a, b);
  else if constexpr (OP == ReduceOp::max) return narrow_minmax<true>(a, b);
  else return a + b;
}

template <typename T>
DataType narrow_type() {
  if constexpr (std::is_same_v<T, half_t>) return DataType::float16;
  else if constexpr (std::is_same_v<T, bfloat16_t>) return DataType::bfloat16;
  else if constexpr (std::is_same_v<T, fp8_e4m3_t>) return DataType::f8e4m3;
  else return DataType::f8e5m2;
}

// Narrow floats: each block of every input is widened to float (narrow_convert.h), reduced there,
// divided for avg, and narrowed once: one rounding per pass, however many inputs. Processors
// without AVX2 and F16C run this; the others narrow_vector_loop, which computes the same.
template <typename T, ReduceOp OP, int NS, int ND, bool FIN>
void narrow_loop(void* const* dstv, const void* const* srcv, size_t n, int nranks) {
  static const NarrowConverters cv = narrow_converters(narrow_type<T>());
  constexpr size_t kBlock = 1024;
  alignas(64) float acc[kBlock], in[kBlock];
  alignas(64) T out[kBlock];
  const float divisor = static_cast<float>(nranks);
  for (size_t i0 = 0; i0 < n; i0 += kBlock) {
    const size_t m = std::min(kBlock, n - i0);
    cv.widen(acc, static_cast<const T*>(srcv[0]) + i0, m);
    for (int k = 1; k < NS; ++k) {
      cv.widen(in, static_cast<const T*>(srcv[k]) + i0, m);
      for (size_t i = 0; i < m; ++i) acc[i] = float_op<OP>(acc[i], in[i]);
    }
    if constexpr (FIN)
      for (size_t i = 0; i < m; ++i) acc[i] = acc[i] / divisor;
    cv.narrow(out, acc, m);
    for (int k = 0; k < ND; ++k) std::memcpy(static_cast<T*>(dstv[k]) + i0, out, m * sizeof(T));
  }
}

#if defined(__x86_64__)
template <ReduceOp OP>
CCB_AVX2 inline __m256 float_op(__m256 a, __m256 b) {
  if constexpr (OP == ReduceOp::min || OP == ReduceOp::max) {
    // narrow_minmax: the instructions give b unless a is less (greater): a NaN b is replaced by
    // a, and of two equal values (+0 and -0) the bits' AND is +0 (max), their OR -0 (min).
    __m256 r = OP == ReduceOp::min ? _mm256_min_ps(a, b) : _mm256_max_ps(a, b);
    r = _mm256_blendv_ps(r, a, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
    const __m256 equal = _mm256_cmp_ps(a, b, _CMP_EQ_OQ);
    return _mm256_blendv_ps(r, OP == ReduceOp::min ? _mm256_or_ps(a, b) : _mm256_and_ps(a, b), equal);
  } else if constexpr (OP == ReduceOp::prod) {
    return _mm256_mul_ps(a, b);
  } else {
    return _mm256_add_ps(a, b);
  }
}

// narrow_loop's arithmetic 8 elements at a time in registers (narrow_lanes.h): every input
// widened, reduced and divided in float, rounded once, stored to every output; no pass through
// memory between the steps, which cost narrow floats 2 to 10 times float's speed per byte. The
// tail (fewer than 8) runs narrow_loop.
template <typename T, ReduceOp OP, int NS, int ND, bool FIN>
CCB_AVX2 void narrow_vector_loop(void* const* dstv, const void* const* srcv, size_t n, int nranks) {
  const T* s[NS];
  for (int k = 0; k < NS; ++k) s[k] = static_cast<const T*>(srcv[k]);
  T* d[ND];
  for (int k = 0; k < ND; ++k) d[k] = static_cast<T*>(dstv[k]);
  const __m256 divisor = _mm256_set1_ps(static_cast<float>(nranks));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 acc = NarrowLanes<T>::widen(s[0] + i);
    for (int k = 1; k < NS; ++k) acc = float_op<OP>(acc, NarrowLanes<T>::widen(s[k] + i));
    if constexpr (FIN) acc = _mm256_div_ps(acc, divisor);
    const __m128i packed = NarrowLanes<T>::narrow(acc);  // every input read before any output is written
    for (int k = 0; k < ND; ++k) NarrowLanes<T>::put(d[k] + i, packed);
  }
  if (i == n) return;
  const void* tail_src[NS];
  void* tail_dst[ND];
  for (int k = 0; k < NS; ++k) tail_src[k] = s[k] + i;
  for (int k = 0; k < ND; ++k) tail_dst[k] = d[k] + i;
  narrow_loop<T, OP, NS, ND, FIN>(tail_dst, tail_src, n - i, nranks);
}
#endif

// The loops of one (type, op, inputs, outputs, finalize) for vector set `isa` (available): narrow
// floats in AVX2 registers from avx2 on, else through blocks of floats; fp8 first in wider
// vectors where `isa` has a loop for the combination (fp8_kernels.h).
template <typename T, ReduceOp OP, int NS, int ND, bool FIN>
ReduceKernels::Loops loops_of(VectorIsa isa) {
  if constexpr (is_narrow_float<T>) {
    ReduceKernels::Loops l{nullptr, &narrow_loop<T, OP, NS, ND, FIN>};
#if defined(__x86_64__)
    if (isa >= VectorIsa::avx2) l.rest = &narrow_vector_loop<T, OP, NS, ND, FIN>;
#endif
    if constexpr (is_fp8<T>) l.bulk = fp8_bulk(isa, narrow_type<T>(), OP, NS, ND, FIN);
    return l;
  } else {
    return {nullptr, &reduce_loop<T, OP, NS, ND, FIN>};
  }
}

using Table = ReduceKernels::Loops[kMaxReduceSrc][kMaxReduceDst][2];

template <typename T, ReduceOp OP, bool FIN, int NS>
void fill_ns(Table& t, int fin_index, VectorIsa isa) {
  t[NS - 1][0][fin_index] = loops_of<T, OP, NS, 1, FIN>(isa);
  t[NS - 1][1][fin_index] = loops_of<T, OP, NS, 2, FIN>(isa);
  t[NS - 1][2][fin_index] = loops_of<T, OP, NS, 3, FIN>(isa);
}

template <typename T, ReduceOp OP, bool FIN>
void fill(Table& t, int fin_index, VectorIsa isa) {
  fill_ns<T, OP, FIN, 1>(t, fin_index, isa);
  fill_ns<T, OP, FIN, 2>(t, fin_index, isa);
  fill_ns<T, OP, FIN, 3>(t, fin_index, isa);
}

template <typename T>
void fill_op(Table& t, ReduceOp op, VectorIsa isa) {
  switch (op) {
    case ReduceOp::sum:
      fill<T, ReduceOp::sum, false>(t, 0, isa);
      fill<T, ReduceOp::sum, false>(t, 1, isa);
      break;
    case ReduceOp::prod:
      fill<T, ReduceOp::prod, false>(t, 0, isa);
      fill<T, ReduceOp::prod, false>(t, 1, isa);
      break;
    case ReduceOp::min:
      fill<T, ReduceOp::min, false>(t, 0, isa);
      fill<T, ReduceOp::min, false>(t, 1, isa);
      break;
    case ReduceOp::max:
      fill<T, ReduceOp::max, false>(t, 0, isa);
      fill<T, ReduceOp::max, false>(t, 1, isa);
      break;
    case ReduceOp::avg:
      fill<T, ReduceOp::sum, false>(t, 0, isa);
      fill<T, ReduceOp::sum, true>(t, 1, isa);
      break;
    case ReduceOp::none: break;  // data movement: copies only
  }
}

// The widest available set at or below `wanted`.
VectorIsa usable(VectorIsa wanted) {
  VectorIsa isa = VectorIsa::portable;
  for (VectorIsa v : kAllVectorIsas)
    if (v <= wanted && vector_isa_available(v)) isa = v;
  return isa;
}

}  // namespace

ReduceKernels::ReduceKernels(DataType type, ReduceOp op, int nranks, VectorIsa isa)
    : type_(type), op_(op), esz_(element_size(type)), nranks_(nranks) {
  dispatch_type(type, [&](auto v) { fill_op<decltype(v)>(loops_, op, usable(isa)); });
}

void ReduceKernels::reduce_multi(void* const* dst, int ndst, const void* const* src, int nsrc, size_t n,
                                 bool finalize) const {
  if (n == 0 || ndst == 0) return;
  const bool fin = finalize && has_finalize();
  if (nsrc == 1 && !fin) return copy_multi(dst, ndst, src[0], n * esz_);
  if (nsrc < 1 || nsrc > kMaxReduceSrc || ndst < 0 || ndst > kMaxReduceDst || !loops_[nsrc - 1][ndst - 1][fin].rest)
    fail(ExitCode::runtime, "no CPU reduction loop for {} inputs, {} outputs, {} {}", nsrc, ndst, name(type_),
         name(op_));
  const Loops& l = loops_[nsrc - 1][ndst - 1][fin];
  const size_t done = l.bulk ? l.bulk(dst, src, n, nranks_) : 0;
  if (done == n) return;
  if (done == 0) return l.rest(dst, src, n, nranks_);
  void* d[kMaxReduceDst];
  const void* s[kMaxReduceSrc];
  for (int k = 0; k < ndst; ++k) d[k] = static_cast<char*>(dst[k]) + done * esz_;
  for (int k = 0; k < nsrc; ++k) s[k] = static_cast<const char*>(src[k]) + done * esz_;
  l.rest(d, s, n - done, nranks_);
}

void copy_multi(void* const* dst, int ndst, const void* src, size_t bytes) {
  if (ndst > kMaxReduceDst) fail(ExitCode::runtime, "copy to {} outputs (at most {})", ndst, kMaxReduceDst);
  char* d[kMaxReduceDst];
  int nd = 0;
  for (int k = 0; k < ndst; ++k)
    if (dst[k] != src) d[nd++] = static_cast<char*>(dst[k]);
  if (nd == 0 || bytes == 0) return;
  const char* s = static_cast<const char*>(src);
  if (nd == 1) {
    std::memcpy(d[0], s, bytes);
    return;
  }
  // Blocks small enough that the copies after the first read the source from L1.
  constexpr size_t kBlock = 16 * 1024;
  for (size_t off = 0; off < bytes; off += kBlock) {
    const size_t len = std::min(kBlock, bytes - off);
    for (int k = 0; k < nd; ++k) std::memcpy(d[k] + off, s + off, len);
  }
}

}  // namespace ccbench
