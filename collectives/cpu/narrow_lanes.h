#pragma once
// Eight narrow floats at a time in AVX2 and F16C registers (x86-64 only): NarrowLanes<T>::widen
// reads 8 elements into 8 floats, narrow rounds 8 floats as result_of<T> does (fp8 through half,
// as NCCL), put stores what narrow packed. Each mirrors the element-by-element code of
// collectives/numeric.h step by step, bit for bit (NaN as there: half sign | 0x7e00, bfloat16
// quieted, fp8 0x7f); tests/unit/test_reduce_kernels.cpp compares them on every pattern and every
// float rounding case. Callers are compiled for AVX2 and F16C (CCB_AVX2) and run only where
// vector_isa_available(VectorIsa::avx2) (cpu_vectors.h).
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "collectives/numeric.h"

#define CCB_AVX2 __attribute__((target("avx2,f16c")))

namespace ccbench::lanes {

CCB_AVX2 inline __m256i splat(std::uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
// a > b for values below 2^31 (every magnitude and small constant here).
CCB_AVX2 inline __m256i greater(__m256i a, std::uint32_t b) { return _mm256_cmpgt_epi32(a, splat(b)); }
CCB_AVX2 inline __m256i select(__m256i mask, __m256i yes, __m256i no) { return _mm256_blendv_epi8(no, yes, mask); }
// 8 lanes of 16 bits (the low half of each 32-bit lane) packed into 128 bits.
CCB_AVX2 inline __m128i pack16(__m256i wide) {
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(wide, wide), 0x08));
}

}  // namespace ccbench::lanes

namespace ccbench {

template <typename T>
struct NarrowLanes;

// half: F16C rounds to nearest even as half_t::from_float; NaN becomes sign | 0x7e00 as there.
template <>
struct NarrowLanes<half_t> {
  CCB_AVX2 static __m256 widen(const half_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  CCB_AVX2 static __m128i narrow(__m256 v) {
    using namespace lanes;
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i x = _mm256_castps_si256(v);
    const __m256i nan = greater(_mm256_and_si256(x, splat(0x7fffffffu)), 0x7f800000u);
    const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(x, 16), splat(0x8000u));
    const __m256i canonical = _mm256_or_si256(sign, splat(0x7e00u));
    return pack16(select(nan, canonical, _mm256_cvtepu16_epi32(h)));
  }
  CCB_AVX2 static void put(half_t* p, __m128i packed) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed); }
};

template <>
struct NarrowLanes<bfloat16_t> {
  CCB_AVX2 static __m256 widen(const bfloat16_t* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  CCB_AVX2 static __m128i narrow(__m256 v) {
    using namespace lanes;
    const __m256i x = _mm256_castps_si256(v);
    const __m256i nan = greater(_mm256_and_si256(x, splat(0x7fffffffu)), 0x7f800000u);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), splat(1));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, splat(0x7fffu)), odd), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), splat(0x40u));
    return pack16(select(nan, quiet, rounded));
  }
  CCB_AVX2 static void put(bfloat16_t* p, __m128i packed) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed); }
};

// fp8: widen as fp8_t::to_float; narrow as result_of: F16C rounds to half (as
// half_t::from_float), then fp8_t::from_float's steps; 8 bytes in the low half of the packed value.
template <int E>
struct NarrowLanes<fp8_t<E>> {
  using T = fp8_t<E>;
  CCB_AVX2 static __m256 widen(const T* p) {
    using namespace lanes;
    constexpr int M = T::kMantissa;
    const __m256 quantum = _mm256_castsi256_ps(splat(static_cast<std::uint32_t>(127 + 1 - T::kBias - M) << 23));
    const __m256i b = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(b, splat(0x80u)), 24);
    const __m256i m = _mm256_and_si256(b, splat(0x7fu));
    const __m256i normal =
        _mm256_add_epi32(_mm256_slli_epi32(m, 23 - M), splat(static_cast<std::uint32_t>(127 - T::kBias) << 23));
    const __m256i sub = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(m), quantum));
    __m256i r = _mm256_or_si256(sign, select(greater(m, (1u << M) - 1), normal, sub));
    if constexpr (E == 4) {  // S.1111.111 is NaN
      r = select(_mm256_cmpeq_epi32(m, splat(0x7fu)), splat(T::kNanFloat), r);
    } else {  // exponent 31 is infinity or NaN
      r = select(_mm256_cmpeq_epi32(m, splat(0x7cu)), _mm256_or_si256(sign, splat(0x7f800000u)), r);
      r = select(greater(m, 0x7cu), splat(T::kNanFloat), r);
    }
    return _mm256_castsi256_ps(r);
  }
  CCB_AVX2 static __m128i narrow(__m256 v) {
    using namespace lanes;
    constexpr int shift = 23 - T::kMantissa;
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i x = _mm256_castps_si256(_mm256_cvtph_ps(h));
    const __m256i a = _mm256_and_si256(x, splat(0x7fffffffu));
    const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(x, 24), splat(0x80u));
    __m256i normal = _mm256_sub_epi32(a, splat(static_cast<std::uint32_t>(127 - T::kBias) << 23));
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(normal, shift), splat(1));
    normal = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(normal, splat((1u << (shift - 1)) - 1u)), odd), shift);
    const __m256 magic = _mm256_castsi256_ps(splat(T::kSubnormalMagic));
    const __m256i sub =
        _mm256_sub_epi32(_mm256_castps_si256(_mm256_add_ps(_mm256_castsi256_ps(a), magic)), splat(T::kSubnormalMagic));
    __m256i r = select(greater(a, T::kMinNormal - 1), normal, sub);
    r = select(greater(a, T::kSaturateFrom - 1), splat(T::kMaxFinite), r);
    r = select(greater(a, 0x7f800000u), splat(0x7fu), _mm256_or_si256(r, sign));
    const __m256i words = _mm256_packus_epi32(r, r);          // 16-bit, per 128-bit half
    const __m256i bytes = _mm256_packus_epi16(words, words);  // 8-bit, per 128-bit half
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0)));
  }
  CCB_AVX2 static void put(T* p, __m128i packed) { _mm_storel_epi64(reinterpret_cast<__m128i*>(p), packed); }
};

}  // namespace ccbench
#endif  // __x86_64__
