#pragma once
// fp8 reductions written once for any vector width. fp8_avx2.cpp, fp8_avx512.cpp,
// fp8_avx512vbmi.cpp and fp8_avx512fp16.cpp each compile this header with their own instruction
// set (compiler flags, collectives/CMakeLists.txt) and hand out its loops (fp8_kernels.h).
// Everything here has internal linkage: the same template compiled for two instruction sets must
// never be merged by the linker, or a processor without AVX-512 could run the AVX-512 copy; for
// the same reason these files call no inline function of another header (numeric.h's constants
// are restated below).
//
// How the loops compute collectives/numeric.h's result_of (the float result rounded to half,
// then to fp8, as NCCL) bit for bit:
//
// Widening. An e5m2 byte is the top byte of the IEEE half of the same value: unpacked with a zero
//   byte below it into a 16-bit lane, it is that half. An e4m3 byte S.EEEE.MMM in the same place,
//   shifted right arithmetically by one and masked with 0xbfff (the copy of the sign dropped), is
//   S.0EEEE.MMM0000000: the half of x/256, subnormals included (e4m3's quantum 2^-9 is half's
//   2^-17 there). e4m3 computes at that scale, exactly: a sum of up to three e4m3 values and a
//   product of two are exact in float, and at 1/256 scale half's subnormal range holds only
//   multiples of e4m3's quantum, which round to themselves, so rounding to half at 1/256 scale
//   gives the half of the value, scaled. vcvtph2ps makes floats.
// Arithmetic. vaddps, vmulps and vdivps as numeric.h in float; vcvtps2ph rounds to nearest even:
//   result_of's "through half" step. With AVX-512 FP16, vaddph / vmulph round once, to half,
//   which equals float-then-half: float's 24 bits are at least twice half's 11 plus 2, which
//   makes the double rounding innocuous (the unit test checks it on every pair).
// Narrowing, in 16-bit lanes: the half's magnitude shifted right by 8 (e5m2) or 7 (e4m3 at 1/256
//   scale) with integer round-to-nearest-even (add half a step less one, plus the lowest kept
//   bit), saturated by one vpminuw to the largest finite code, as from_float saturates every
//   larger value, infinities included; then the sign. NaN: e5m2 from the half (magnitude above
//   infinity's), e4m3 from the input bytes (its NaN, S.1111.111, widens to a number). vpackuswb
//   undoes the unpack (both work within 128-bit lanes), so the bytes come back in order.
// min and max need no float. A sign-magnitude byte with its low 7 bits flipped when negative is
//   a signed integer that orders as the value does, -0 below +0 as narrow_minmax; vpmaxsb and
//   vpminsb compare those keys. narrow_minmax ignores a NaN operand: adding (max) or subtracting
//   (min) the number of NaN codes per sign (kNanCodes) rotates the keys so that every NaN lands
//   at the losing end, below (above) every number; a result there means all inputs were NaN.
//   e5m2 infinities come out as the largest finite value, as from_float saturates them.
//
// Not here (the 8-lane loop of reduce_kernels.cpp does them): e4m3 avg's division and e4m3
// products of three inputs. Below 2^-6 their exact results can carry bits under 2^-16, which
// rounding to half at 1/256 scale would round away first, a rounding result_of does not make
// (for the division this changes results from 129 ranks on: the unit test sees it).
#if defined(__x86_64__)
// GCC 12's own AVX-512 intrinsics read _mm512_undefined_*() values and warn about it in the
// header (GCC bug 105593, fixed in 13); the files including this one include it first.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "collectives/cpu/fp8_kernels.h"

namespace ccbench {
namespace {

constexpr int kRoundNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// The steps of one vector are inlined into the loop, whatever the compiler's size heuristics say
// (otherwise the vectors go through memory to a call per step).
#define CCB_STEP [[gnu::always_inline]] inline

// ---- vectors: the operations the loops use, one struct per width ----------------------------

#if defined(__AVX2__) && defined(__F16C__)
// 32 bytes (16 halves, two vectors of 8 floats). Masks are vectors: all ones where true.
struct V256 {
  using I = __m256i;
  using F = __m256;
  using M8 = __m256i;
  using M16 = __m256i;
  static constexpr std::size_t kBytes = 32;

  static I load(const std::uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store(std::uint8_t* p, I v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static I bytes(int x) { return _mm256_set1_epi8(static_cast<char>(x)); }
  static I words(int x) { return _mm256_set1_epi16(static_cast<short>(x)); }
  static I and_(I a, I b) { return _mm256_and_si256(a, b); }
  static I or_(I a, I b) { return _mm256_or_si256(a, b); }
  // Bytes 0-7 (lo) or 8-15 (hi) of each 128-bit lane into 16-bit lanes, as their high byte.
  static I lo_words(I b) { return _mm256_unpacklo_epi8(_mm256_setzero_si256(), b); }
  static I hi_words(I b) { return _mm256_unpackhi_epi8(_mm256_setzero_si256(), b); }
  // 16-bit lanes of values up to 0xff back to bytes, in the order lo_words / hi_words took them.
  static I pack(I lo, I hi) { return _mm256_packus_epi16(lo, hi); }
  template <int S>
  static I srl16(I a) {
    return _mm256_srli_epi16(a, S);
  }
  template <int S>
  static I sra16(I a) {
    return _mm256_srai_epi16(a, S);
  }
  static I add16(I a, I b) { return _mm256_add_epi16(a, b); }
  static I min16u(I a, I b) { return _mm256_min_epu16(a, b); }
  static M16 gt16(I a, I b) { return _mm256_cmpgt_epi16(a, b); }
  static I select16(M16 m, I yes, I no) { return _mm256_blendv_epi8(no, yes, m); }
  static I add8(I a, I b) { return _mm256_add_epi8(a, b); }
  static I sub8(I a, I b) { return _mm256_sub_epi8(a, b); }
  static I max8(I a, I b) { return _mm256_max_epi8(a, b); }
  static I min8(I a, I b) { return _mm256_min_epi8(a, b); }
  static M8 gt8(I a, I b) { return _mm256_cmpgt_epi8(a, b); }
  static M8 eq8(I a, I b) { return _mm256_cmpeq_epi8(a, b); }
  static M8 either(M8 a, M8 b) { return _mm256_or_si256(a, b); }
  static I select8(M8 m, I yes, I no) { return _mm256_blendv_epi8(no, yes, m); }
  // The low 7 bits of the negative bytes flipped.
  static I flip_negative(I b) {
    return _mm256_xor_si256(b, _mm256_and_si256(gt8(_mm256_setzero_si256(), b), bytes(0x7f)));
  }
  // 16 halves as floats: lanes 0-7 and 8-15; and back, rounded to nearest even.
  static F floats_lo(I h) { return _mm256_cvtph_ps(_mm256_castsi256_si128(h)); }
  static F floats_hi(I h) { return _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)); }
  static I halves(F lo, F hi) {
    return _mm256_set_m128i(_mm256_cvtps_ph(hi, kRoundNearestEven), _mm256_cvtps_ph(lo, kRoundNearestEven));
  }
  static F splat(float x) { return _mm256_set1_ps(x); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
};
#endif

#if defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__F16C__)
// 64 bytes (32 halves, two vectors of 16 floats). Masks are mask registers, a bit per lane.
struct V512 {
  using I = __m512i;
  using F = __m512;
  using M8 = __mmask64;
  using M16 = __mmask32;
  static constexpr std::size_t kBytes = 64;

  static I load(const std::uint8_t* p) { return _mm512_loadu_si512(p); }
  static void store(std::uint8_t* p, I v) { _mm512_storeu_si512(p, v); }
  static I bytes(int x) { return _mm512_set1_epi8(static_cast<char>(x)); }
  static I words(int x) { return _mm512_set1_epi16(static_cast<short>(x)); }
  static I and_(I a, I b) { return _mm512_and_si512(a, b); }
  static I or_(I a, I b) { return _mm512_or_si512(a, b); }
  static I lo_words(I b) { return _mm512_unpacklo_epi8(_mm512_setzero_si512(), b); }
  static I hi_words(I b) { return _mm512_unpackhi_epi8(_mm512_setzero_si512(), b); }
  static I pack(I lo, I hi) { return _mm512_packus_epi16(lo, hi); }
  template <int S>
  static I srl16(I a) {
    return _mm512_srli_epi16(a, S);
  }
  template <int S>
  static I sra16(I a) {
    return _mm512_srai_epi16(a, S);
  }
  static I add16(I a, I b) { return _mm512_add_epi16(a, b); }
  static I min16u(I a, I b) { return _mm512_min_epu16(a, b); }
  static M16 gt16(I a, I b) { return _mm512_cmpgt_epi16_mask(a, b); }
  static I select16(M16 m, I yes, I no) { return _mm512_mask_blend_epi16(m, no, yes); }
  static I add8(I a, I b) { return _mm512_add_epi8(a, b); }
  static I sub8(I a, I b) { return _mm512_sub_epi8(a, b); }
  static I max8(I a, I b) { return _mm512_max_epi8(a, b); }
  static I min8(I a, I b) { return _mm512_min_epi8(a, b); }
  static M8 gt8(I a, I b) { return _mm512_cmpgt_epi8_mask(a, b); }
  static M8 eq8(I a, I b) { return _mm512_cmpeq_epi8_mask(a, b); }
  static M8 either(M8 a, M8 b) { return a | b; }
  static I select8(M8 m, I yes, I no) { return _mm512_mask_blend_epi8(m, no, yes); }
  // For a negative byte b, b ^ 0x7f = 0x7f - b (mod 256): one masked subtraction.
  static I flip_negative(I b) { return _mm512_mask_sub_epi8(b, _mm512_movepi8_mask(b), bytes(0x7f), b); }
  static F floats_lo(I h) { return _mm512_cvtph_ps(_mm512_castsi512_si256(h)); }
  static F floats_hi(I h) { return _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1)); }
  static I halves(F lo, F hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtps_ph(lo, kRoundNearestEven)),
                              _mm512_cvtps_ph(hi, kRoundNearestEven), 1);
  }
  static F splat(float x) { return _mm512_set1_ps(x); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F div(F a, F b) { return _mm512_div_ps(a, b); }
};
#endif

// ---- the two formats ------------------------------------------------------------------------

template <int E>
struct Fp8Format {
  static_assert(E == 4 || E == 5, "f8e4m3 or f8e5m2");
  static constexpr int kShift = E == 4 ? 7 : 8;            // half mantissa bits below fp8's
  static constexpr int kMaxFinite = E == 4 ? 0x7e : 0x7b;  // 448 and 57344 (fp8_t::kMaxFinite)
  static constexpr int kNanCodes = E == 4 ? 1 : 3;         // per sign: S.1111.111; S.11111.01-11
  static constexpr int kHalfInfinity = 0x7c00;
  static constexpr float kScale = E == 4 ? 256.0f : 1.0f;  // a widened element is x / kScale
  static constexpr int kNan = 0x7f;                        // every NaN result (fp8_t::from_float)
};

// ---- widening and narrowing -----------------------------------------------------------------

// A vector of bytes as halves in two vectors of 16-bit lanes (lo_words / hi_words).
template <class V>
struct Halves {
  typename V::I lo, hi;
};

template <class V, int E>
CCB_STEP Halves<V> widen(typename V::I b) {
  Halves<V> h{V::lo_words(b), V::hi_words(b)};
  if constexpr (E == 4) {
    const auto drop_sign_copy = V::words(0xbfff);
    h.lo = V::and_(V::template sra16<1>(h.lo), drop_sign_copy);
    h.hi = V::and_(V::template sra16<1>(h.hi), drop_sign_copy);
  }
  return h;
}

// Halves (at 1/256 scale for e4m3) to fp8 codes in 16-bit lanes: result_of's second rounding.
template <class V, int E>
CCB_STEP typename V::I narrow_lanes(typename V::I h) {
  using Fmt = Fp8Format<E>;
  constexpr int S = Fmt::kShift;
  const auto mag = V::and_(h, V::words(0x7fff));
  const auto kept_lsb = V::and_(V::template srl16<S>(mag), V::words(1));
  auto r = V::template srl16<S>(V::add16(V::add16(mag, V::words((1 << (S - 1)) - 1)), kept_lsb));
  r = V::min16u(r, V::words(Fmt::kMaxFinite));
  r = V::or_(r, V::and_(V::template srl16<8>(h), V::words(0x80)));
  if constexpr (E == 5) r = V::select16(V::gt16(mag, V::words(Fmt::kHalfInfinity)), V::words(Fmt::kNan), r);
  return r;
}

template <class V, int E>
CCB_STEP typename V::I narrow(const Halves<V>& h) {
  return V::pack(narrow_lanes<V, E>(h.lo), narrow_lanes<V, E>(h.hi));
}

// ---- arithmetic: in float (any width), or in half (AVX-512 FP16) ----------------------------

// One vector of bytes as four vectors of floats.
template <class V, int E>
struct FloatMath {
  struct Acc {
    typename V::F f[4];
  };
  CCB_STEP static Acc widen(typename V::I b) {
    const Halves<V> h = ccbench::widen<V, E>(b);
    return {{V::floats_lo(h.lo), V::floats_hi(h.lo), V::floats_lo(h.hi), V::floats_hi(h.hi)}};
  }
  CCB_STEP static void add(Acc& a, const Acc& b) {
    for (int k = 0; k < 4; ++k) a.f[k] = V::add(a.f[k], b.f[k]);
  }
  CCB_STEP static void mul(Acc& a, const Acc& b) {
    for (int k = 0; k < 4; ++k) a.f[k] = V::mul(a.f[k], b.f[k]);
  }
  CCB_STEP static void scale(Acc& a, float s) {
    for (int k = 0; k < 4; ++k) a.f[k] = V::mul(a.f[k], V::splat(s));
  }
  CCB_STEP static void divide(Acc& a, float d) {
    for (int k = 0; k < 4; ++k) a.f[k] = V::div(a.f[k], V::splat(d));
  }
  CCB_STEP static Halves<V> round(const Acc& a) { return {V::halves(a.f[0], a.f[1]), V::halves(a.f[2], a.f[3])}; }
};

#if defined(__AVX512FP16__)
// The halves themselves, 32 per vector: vaddph / vmulph round once, to half.
template <int E>
struct HalfMath {
  using Acc = Halves<V512>;
  CCB_STEP static Acc widen(__m512i b) { return ccbench::widen<V512, E>(b); }
  CCB_STEP static __m512i add_ph(__m512i a, __m512i b) {
    return _mm512_castph_si512(_mm512_add_ph(_mm512_castsi512_ph(a), _mm512_castsi512_ph(b)));
  }
  CCB_STEP static __m512i mul_ph(__m512i a, __m512i b) {
    return _mm512_castph_si512(_mm512_mul_ph(_mm512_castsi512_ph(a), _mm512_castsi512_ph(b)));
  }
  CCB_STEP static void add(Acc& a, const Acc& b) { a = {add_ph(a.lo, b.lo), add_ph(a.hi, b.hi)}; }
  CCB_STEP static void mul(Acc& a, const Acc& b) { a = {mul_ph(a.lo, b.lo), mul_ph(a.hi, b.hi)}; }
  CCB_STEP static void scale(Acc& a, float s) {  // by a power of two that keeps every value a normal half: exact
    const __m512i f = _mm512_castph_si512(_mm512_set1_ph(static_cast<_Float16>(s)));
    a = {mul_ph(a.lo, f), mul_ph(a.hi, f)};
  }
  CCB_STEP static Halves<V512> round(const Acc& a) { return a; }
};
#endif

// ---- one vector of every input to one vector of results ------------------------------------

template <class V, int E, bool MAX, int NS>
CCB_STEP typename V::I minmax(const typename V::I* x) {
  using Fmt = Fp8Format<E>;
  constexpr int kRotate = MAX ? Fmt::kNanCodes : -Fmt::kNanCodes;
  const auto rotate = V::bytes(kRotate);
  auto r = V::add8(V::flip_negative(x[0]), rotate);
  for (int k = 1; k < NS; ++k) {
    const auto key = V::add8(V::flip_negative(x[k]), rotate);
    if constexpr (MAX) r = V::max8(r, key);
    else r = V::min8(r, key);
  }
  // Every input NaN: the result is one of the 2 * kNanCodes rotated NaN keys at the losing end.
  const auto all_nan =
      MAX ? V::gt8(V::bytes(-128 + 2 * Fmt::kNanCodes), r) : V::gt8(r, V::bytes(127 - 2 * Fmt::kNanCodes));
  r = V::sub8(r, rotate);
  if constexpr (E == 5) {  // keys of -57344 and 57344: from_float saturates the infinities to them
    constexpr int kLowestKey = -1 - Fmt::kMaxFinite, kHighestKey = Fmt::kMaxFinite;
    r = V::max8(V::min8(r, V::bytes(kHighestKey)), V::bytes(kLowestKey));
  }
  return V::select8(all_nan, V::bytes(Fmt::kNan), V::flip_negative(r));
}

// e4m3 NaN inputs (S.1111.111): any of them makes the result NaN.
template <class V, int NS>
CCB_STEP typename V::M8 any_e4m3_nan(const typename V::I* x) {
  const auto nan = V::bytes(0xff);
  auto m = V::eq8(V::or_(x[0], V::bytes(0x80)), nan);
  for (int k = 1; k < NS; ++k) m = V::either(m, V::eq8(V::or_(x[k], V::bytes(0x80)), nan));
  return m;
}

template <class V, class Math, int E, ReduceOp OP, int NS, bool FIN>
CCB_STEP typename V::I reduce_vector(const typename V::I* x, float divisor) {
  if constexpr (OP == ReduceOp::min || OP == ReduceOp::max) {
    return minmax<V, E, OP == ReduceOp::max, NS>(x);
  } else {
    auto acc = Math::widen(x[0]);
    for (int k = 1; k < NS; ++k) {
      auto next = Math::widen(x[k]);
      if constexpr (OP == ReduceOp::prod) {
        if constexpr (E == 4) Math::scale(next, Fp8Format<4>::kScale);  // keeps the product at 1/256 scale
        Math::mul(acc, next);
      } else {
        Math::add(acc, next);
      }
    }
    if constexpr (FIN) Math::divide(acc, divisor);
    const typename V::I r = narrow<V, E>(Math::round(acc));
    if constexpr (E == 4) return V::select8(any_e4m3_nan<V, NS>(x), V::bytes(Fp8Format<4>::kNan), r);
    else return r;
  }
}

// ---- the loops and their table --------------------------------------------------------------

template <class V, class Math, int E, ReduceOp OP, int NS, int ND, bool FIN>
std::size_t bulk(void* const* dstv, const void* const* srcv, std::size_t n, int nranks) {
  const std::uint8_t* s[NS];
  for (int k = 0; k < NS; ++k) s[k] = static_cast<const std::uint8_t*>(srcv[k]);
  std::uint8_t* d[ND];
  for (int k = 0; k < ND; ++k) d[k] = static_cast<std::uint8_t*>(dstv[k]);
  const float divisor = static_cast<float>(nranks);
  std::size_t i = 0;
  for (; i + V::kBytes <= n; i += V::kBytes) {
    typename V::I x[NS];
    for (int k = 0; k < NS; ++k) x[k] = V::load(s[k] + i);
    const typename V::I r = reduce_vector<V, Math, E, OP, NS, FIN>(x, divisor);  // every input read first
    for (int k = 0; k < ND; ++k) V::store(d[k] + i, r);
  }
  return i;
}

// The combinations these loops compute exactly (the header comment says why e4m3 has fewer);
// avg is sum plus FIN, and one input only finalizes.
template <int E, ReduceOp OP, int NS, bool FIN>
constexpr bool computed_here() {
  if (NS == 1 && !FIN) return false;
  if (FIN && (OP != ReduceOp::sum || E == 4)) return false;
  return !(E == 4 && OP == ReduceOp::prod && NS == 3);
}

// Which arithmetic a combination uses: Policy::Math<E, OP, NS, FIN>.
template <class V>
struct FloatPolicy {
  template <int E, ReduceOp OP, int NS, bool FIN>
  using Math = FloatMath<V, E>;
};

template <class V, class Policy, int E, ReduceOp OP, int NS, int ND>
Fp8Bulk pick(bool fin) {
  if (fin) {
    if constexpr (computed_here<E, OP, NS, true>())
      return &bulk<V, typename Policy::template Math<E, OP, NS, true>, E, OP, NS, ND, true>;
    return nullptr;
  }
  if constexpr (computed_here<E, OP, NS, false>())
    return &bulk<V, typename Policy::template Math<E, OP, NS, false>, E, OP, NS, ND, false>;
  return nullptr;
}

template <class V, class Policy, int E, ReduceOp OP, int NS>
Fp8Bulk pick(int nd, bool fin) {
  switch (nd) {
    case 1: return pick<V, Policy, E, OP, NS, 1>(fin);
    case 2: return pick<V, Policy, E, OP, NS, 2>(fin);
    case 3: return pick<V, Policy, E, OP, NS, 3>(fin);
    default: return nullptr;
  }
}

template <class V, class Policy, int E, ReduceOp OP>
Fp8Bulk pick(int ns, int nd, bool fin) {
  switch (ns) {
    case 1: return pick<V, Policy, E, OP, 1>(nd, fin);
    case 2: return pick<V, Policy, E, OP, 2>(nd, fin);
    case 3: return pick<V, Policy, E, OP, 3>(nd, fin);
    default: return nullptr;
  }
}

template <class V, class Policy, int E>
Fp8Bulk pick(ReduceOp op, int ns, int nd, bool fin) {
  switch (op) {
    case ReduceOp::sum: return pick<V, Policy, E, ReduceOp::sum>(ns, nd, fin);
    case ReduceOp::prod: return pick<V, Policy, E, ReduceOp::prod>(ns, nd, fin);
    case ReduceOp::min: return pick<V, Policy, E, ReduceOp::min>(ns, nd, fin);
    case ReduceOp::max: return pick<V, Policy, E, ReduceOp::max>(ns, nd, fin);
    default: return nullptr;
  }
}

template <class V, class Policy>
Fp8Bulk bulk_table(int e, ReduceOp op, int ns, int nd, bool fin) {
  if (e == 4) return pick<V, Policy, 4>(op, ns, nd, fin);
  if (e == 5) return pick<V, Policy, 5>(op, ns, nd, fin);
  return nullptr;
}

#undef CCB_STEP

}  // namespace
}  // namespace ccbench
#endif  // __x86_64__
