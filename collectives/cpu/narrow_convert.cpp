#include "collectives/cpu/narrow_convert.h"

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "collectives/numeric.h"
#include "core/error.h"

namespace ccbench {

namespace {

// ---- element by element: the definition ----------------------------------------------------

template <typename T>
void widen_scalar(float* dst, const void* src, size_t n) {
  const T* s = static_cast<const T*>(src);
  for (size_t i = 0; i < n; ++i) dst[i] = to_arith(s[i]);
}

template <typename T>
void narrow_scalar(void* dst, const float* src, size_t n) {
  T* d = static_cast<T*>(dst);
  for (size_t i = 0; i < n; ++i) d[i] = result_of<T>(src[i]);
}

#if defined(__x86_64__)
// ---- AVX2 + F16C: 8 elements at a time, the tail element by element ------------------------
// Each mirrors the scalar code of collectives/numeric.h step by step; tests/unit/
// test_reduce_kernels.cpp compares them on every 16-bit pattern and every float rounding case.

#define CCB_AVX2 __attribute__((target("avx2,f16c")))

CCB_AVX2 inline __m256i splat(std::uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
// a > b for values below 2^31 (every magnitude and small constant here).
CCB_AVX2 inline __m256i greater(__m256i a, std::uint32_t b) { return _mm256_cmpgt_epi32(a, splat(b)); }
CCB_AVX2 inline __m256i select(__m256i mask, __m256i yes, __m256i no) { return _mm256_blendv_epi8(no, yes, mask); }

// half: F16C rounds to nearest even as half_t::from_float; NaN becomes sign | 0x7e00 as there.
CCB_AVX2 void widen_half(float* dst, const void* src, size_t n) {
  const auto* s = static_cast<const std::uint16_t*>(src);
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
  widen_scalar<half_t>(dst + i, s + i, n - i);
}

CCB_AVX2 void narrow_half(void* dst, const float* src, size_t n) {
  auto* d = static_cast<std::uint16_t*>(dst);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i x = _mm256_castps_si256(v);
    const __m256i nan = greater(_mm256_and_si256(x, splat(0x7fffffffu)), 0x7f800000u);
    const __m256i canonical = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(x, 16), splat(0x8000u)), splat(0x7e00u));
    __m256i wide = select(nan, canonical, _mm256_cvtepu16_epi32(h));
    wide = _mm256_permute4x64_epi64(_mm256_packus_epi32(wide, wide), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_castsi256_si128(wide));
  }
  narrow_scalar<half_t>(d + i, src + i, n - i);
}

CCB_AVX2 void widen_bf16(float* dst, const void* src, size_t n) {
  const auto* s = static_cast<const std::uint16_t*>(src);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_slli_epi32(w, 16));
  }
  widen_scalar<bfloat16_t>(dst + i, s + i, n - i);
}

CCB_AVX2 void narrow_bf16(void* dst, const float* src, size_t n) {
  auto* d = static_cast<std::uint16_t*>(dst);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i nan = greater(_mm256_and_si256(x, splat(0x7fffffffu)), 0x7f800000u);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), splat(1));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, splat(0x7fffu)), odd), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), splat(0x40u));
    __m256i wide = select(nan, quiet, rounded);
    wide = _mm256_permute4x64_epi64(_mm256_packus_epi32(wide, wide), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_castsi256_si128(wide));
  }
  narrow_scalar<bfloat16_t>(d + i, src + i, n - i);
}

// fp8: as fp8_t::to_float, 8 lanes.
template <typename T>
CCB_AVX2 void widen_fp8(float* dst, const void* src, size_t n) {
  constexpr int M = T::kMantissa;
  const auto* s = static_cast<const std::uint8_t*>(src);
  const __m256 quantum = _mm256_castsi256_ps(splat(static_cast<std::uint32_t>(127 + 1 - T::kBias - M) << 23));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i b = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + i)));
    const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(b, splat(0x80u)), 24);
    const __m256i m = _mm256_and_si256(b, splat(0x7fu));
    const __m256i normal = _mm256_add_epi32(_mm256_slli_epi32(m, 23 - M), splat(static_cast<std::uint32_t>(127 - T::kBias) << 23));
    const __m256i sub = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(m), quantum));
    __m256i r = _mm256_or_si256(sign, select(greater(m, (1u << M) - 1), normal, sub));
    if constexpr (T::kMantissa == 3) {  // e4m3: S.1111.111 is NaN
      r = select(_mm256_cmpeq_epi32(m, splat(0x7fu)), splat(T::kNanFloat), r);
    } else {  // e5m2: exponent 31 is infinity or NaN
      r = select(_mm256_cmpeq_epi32(m, splat(0x7cu)), _mm256_or_si256(sign, splat(0x7f800000u)), r);
      r = select(greater(m, 0x7cu), splat(T::kNanFloat), r);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), r);
  }
  widen_scalar<T>(dst + i, s + i, n - i);
}

// fp8 as result_of: F16C rounds to half (as half_t::from_float), then fp8_t::from_float's steps.
template <typename T>
CCB_AVX2 void narrow_fp8(void* dst, const float* src, size_t n) {
  constexpr int shift = 23 - T::kMantissa;
  auto* d = static_cast<std::uint8_t*>(dst);
  const __m256 magic = _mm256_castsi256_ps(splat(T::kSubnormalMagic));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i x = _mm256_castps_si256(_mm256_cvtph_ps(h));
    const __m256i a = _mm256_and_si256(x, splat(0x7fffffffu));
    const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(x, 24), splat(0x80u));
    __m256i normal = _mm256_sub_epi32(a, splat(static_cast<std::uint32_t>(127 - T::kBias) << 23));
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(normal, shift), splat(1));
    normal = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(normal, splat((1u << (shift - 1)) - 1u)), odd), shift);
    const __m256i sub = _mm256_sub_epi32(_mm256_castps_si256(_mm256_add_ps(_mm256_castsi256_ps(a), magic)), splat(T::kSubnormalMagic));
    __m256i r = select(greater(a, T::kMinNormal - 1), normal, sub);
    r = select(greater(a, T::kSaturateFrom - 1), splat(T::kMaxFinite), r);
    r = select(greater(a, 0x7f800000u), splat(0x7fu), _mm256_or_si256(r, sign));
    const __m256i words = _mm256_packus_epi32(r, r);                          // 16-bit, per 128-bit half
    const __m256i bytes = _mm256_packus_epi16(words, words);                  // 8-bit, per 128-bit half
    const __m256i both = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + i), _mm256_castsi256_si128(both));
  }
  narrow_scalar<T>(d + i, src + i, n - i);
}

#undef CCB_AVX2
#endif  // __x86_64__

template <typename T>
NarrowConverters scalar_converters() {
  return {&widen_scalar<T>, &narrow_scalar<T>};
}

}  // namespace

bool is_narrow_float_type(DataType t) {
  return t == DataType::float16 || t == DataType::bfloat16 || t == DataType::f8e4m3 || t == DataType::f8e5m2;
}

bool narrow_vectors_available() {
#if defined(__x86_64__)
  static const bool available = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return available;
#else
  return false;
#endif
}

NarrowConverters narrow_converters(DataType t, bool vectorised) {
#if defined(__x86_64__)
  if (vectorised && narrow_vectors_available()) {
    switch (t) {
      case DataType::float16: return {&widen_half, &narrow_half};
      case DataType::bfloat16: return {&widen_bf16, &narrow_bf16};
      case DataType::f8e4m3: return {&widen_fp8<fp8_e4m3_t>, &narrow_fp8<fp8_e4m3_t>};
      case DataType::f8e5m2: return {&widen_fp8<fp8_e5m2_t>, &narrow_fp8<fp8_e5m2_t>};
      default: break;
    }
  }
#else
  (void)vectorised;
#endif
  switch (t) {
    case DataType::float16: return scalar_converters<half_t>();
    case DataType::bfloat16: return scalar_converters<bfloat16_t>();
    case DataType::f8e4m3: return scalar_converters<fp8_e4m3_t>();
    case DataType::f8e5m2: return scalar_converters<fp8_e5m2_t>();
    default: fail(ExitCode::runtime, "{} is not a narrow float type", name(t));
  }
}

}  // namespace ccbench
