#pragma once
// Element types and reductions shared by host code and CUDA kernels (header-only, no CUDA needed).
// half_t and bfloat16_t are 16-bit storage types bit-compatible with CUDA's __half and
// __nv_bfloat16, fp8_e4m3_t and fp8_e5m2_t 8-bit ones bit-compatible with __nv_fp8_e4m3 and
// __nv_fp8_e5m2; arithmetic on them goes through float, rounding to nearest even.
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "collectives/types.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#define CCB_HD __host__ __device__ __forceinline__
#else
#define CCB_HD inline
#endif

namespace ccbench {

CCB_HD std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
CCB_HD float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

struct half_t {
  std::uint16_t bits;
  CCB_HD static half_t from_float(float f) {
#if defined(__CUDA_ARCH__)
    return {__half_as_ushort(__float2half_rn(f))};
#endif
    std::uint32_t x = float_bits(f);
    std::uint32_t sign = (x >> 16) & 0x8000u;
    std::uint32_t exp = (x >> 23) & 0xffu;
    std::uint32_t man = x & 0x7fffffu;
    if (exp == 0xff) return {static_cast<std::uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0u))};
    int e = static_cast<int>(exp) - 127 + 15;
    if (e >= 31) return {static_cast<std::uint16_t>(sign | 0x7c00u)};
    if (e <= 0) {  // subnormal half or zero
      if (e < -10) return {static_cast<std::uint16_t>(sign)};
      man |= 0x800000u;
      std::uint32_t shift = static_cast<std::uint32_t>(14 - e);
      std::uint32_t h = man >> shift;
      std::uint32_t rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1);
      if (rem > half || (rem == half && (h & 1u))) ++h;
      return {static_cast<std::uint16_t>(sign | h)};
    }
    std::uint32_t h = (static_cast<std::uint32_t>(e) << 10) | (man >> 13);
    std::uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: correct
    return {static_cast<std::uint16_t>(sign | h)};
  }
  CCB_HD float to_float() const {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(bits));
#endif
    std::uint32_t sign = (bits & 0x8000u) << 16;
    std::uint32_t exp = (bits >> 10) & 0x1fu;
    std::uint32_t man = bits & 0x3ffu;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
      if (man == 0) return bits_float(sign);
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400u));
      return bits_float(sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13));
    }
    return bits_float(sign | ((exp + 127 - 15) << 23) | (man << 13));
  }
};

struct bfloat16_t {
  std::uint16_t bits;
  CCB_HD static bfloat16_t from_float(float f) {
#if defined(__CUDA_ARCH__)
    return {__bfloat16_as_ushort(__float2bfloat16_rn(f))};
#endif
    std::uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((x >> 16) | 0x40u)};  // NaN
    x += 0x7fffu + ((x >> 16) & 1u);
    return {static_cast<std::uint16_t>(x >> 16)};
  }
  CCB_HD float to_float() const { return bits_float(static_cast<std::uint32_t>(bits) << 16); }
};

// The OCP 8-bit floats, as CUDA's __nv_fp8_e4m3 (E = 4: bias 7, no infinity, S.1111.111 is NaN,
// largest 448) and __nv_fp8_e5m2 (E = 5: bias 15, IEEE-like with infinities, largest 57344).
// from_float rounds to nearest even and saturates to the largest finite value, infinities
// included, as __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...) (what CUDA's constructors use);
// NaN becomes 0x7f. to_float is exact; NaN gives 0x7fffe000, as CUDA's conversion through __half.
// tests/unit/test_numeric.cpp compares both with cuda_fp8.h bit for bit.
template <int E>
struct fp8_t {
  static_assert(E == 4 || E == 5, "fp8_t: e4m3 or e5m2");
  static constexpr int kMantissa = 7 - E;
  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr std::uint8_t kMaxFinite = E == 4 ? 0x7e : 0x7b;
  static constexpr int kMaxExponent = E == 4 ? 8 : 15;  // of the largest finite value, 1.75 * 2^kMaxExponent
  // Float magnitudes (bits) from which from_float saturates: e4m3 above 464 (448 plus half its
  // step; 464 itself ties to 448), e5m2 from 61440 (the tie would round up to 65536).
  static constexpr std::uint32_t kSaturateFrom = E == 4 ? 0x43e80001u : 0x47700000u;
  static constexpr std::uint32_t kMinNormal = static_cast<std::uint32_t>(127 + 1 - kBias) << 23;
  // The float whose step is the subnormal quantum 2^(1 - bias - mantissa): adding it rounds a
  // subnormal magnitude to a whole number of quanta (nearest even) in its low bits.
  static constexpr std::uint32_t kSubnormalMagic = static_cast<std::uint32_t>(127 + 23 + 1 - kBias - kMantissa) << 23;
  static constexpr std::uint32_t kNanFloat = 0x7fffe000u;

  std::uint8_t bits;

  CCB_HD static fp8_t from_float(float f) {
#if defined(__CUDA_ARCH__)
    return {static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, E == 4 ? __NV_E4M3 : __NV_E5M2))};
#endif
    const std::uint32_t u = float_bits(f), a = u & 0x7fffffffu, sign = (u >> 24) & 0x80u;
    if (a > 0x7f800000u) return {0x7f};
    if (a >= kSaturateFrom) return {static_cast<std::uint8_t>(sign | kMaxFinite)};
    if (a >= kMinNormal) {
      constexpr int shift = 23 - kMantissa;
      std::uint32_t r = a - (static_cast<std::uint32_t>(127 - kBias) << 23);
      r = (r + (1u << (shift - 1)) - 1u + ((r >> shift) & 1u)) >> shift;  // may carry into the exponent: correct
      return {static_cast<std::uint8_t>(sign | r)};
    }
    const std::uint32_t q = float_bits(bits_float(a) + bits_float(kSubnormalMagic)) - kSubnormalMagic;
    return {static_cast<std::uint8_t>(sign | q)};
  }

  CCB_HD float to_float() const {
#if defined(__CUDA_ARCH__)
    return __half2float(__half(__nv_cvt_fp8_to_halfraw(bits, E == 4 ? __NV_E4M3 : __NV_E5M2)));
#endif
    const std::uint32_t m = bits & 0x7fu, sign = static_cast<std::uint32_t>(bits & 0x80u) << 24;
    if (E == 4 ? m == 0x7fu : m > 0x7cu) return bits_float(kNanFloat);
    if (E == 5 && m == 0x7cu) return bits_float(sign | 0x7f800000u);
    if ((m >> kMantissa) == 0) {  // subnormal: m quanta
      const float quantum = bits_float(static_cast<std::uint32_t>(127 + 1 - kBias - kMantissa) << 23);
      return bits_float(sign | float_bits(static_cast<float>(m) * quantum));
    }
    return bits_float(sign | ((m << (23 - kMantissa)) + (static_cast<std::uint32_t>(127 - kBias) << 23)));
  }
};
using fp8_e4m3_t = fp8_t<4>;
using fp8_e5m2_t = fp8_t<5>;

template <typename T>
inline constexpr bool is_fp8 = std::is_same_v<T, fp8_e4m3_t> || std::is_same_v<T, fp8_e5m2_t>;
// Floats stored in 16 or 8 bits: arithmetic on them goes through float.
template <typename T>
inline constexpr bool is_narrow_float = std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t> || is_fp8<T>;

// Arithmetic value of an element (wide type for narrow floats) and back.
template <typename T>
CCB_HD auto to_arith(T v) {
  if constexpr (is_narrow_float<T>) return v.to_float();
  else return v;
}
template <typename T, typename A>
CCB_HD T from_arith(A v) {
  if constexpr (is_narrow_float<T>) return T::from_float(static_cast<float>(v));
  else return static_cast<T>(v);
}

// A reduction's result as an element. fp8 results are rounded to half first, then to fp8, as NCCL
// computes fp8 in half precision (src/device/reduce_kernel.h: __nv_fp8_e4m3(__hadd(__half(x),
// __half(y))), and the same for prod, min/max and the avg pre-multiplication), so a pair reduces
// bit for bit as NCCL's; the others as from_arith.
template <typename T, typename A>
CCB_HD T result_of(A v) {
  if constexpr (is_fp8<T>) return T::from_float(half_t::from_float(static_cast<float>(v)).to_float());
  else return from_arith<T>(v);
}

CCB_HD std::uint64_t double_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
#endif
}

CCB_HD double bits_double(std::uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  std::memcpy(&d, &u, 8);
  return d;
#endif
}

// Whether the sign bit of x is set (-0 and negative NaNs included), read from its bits.
CCB_HD bool sign_bit(float x) { return (float_bits(x) >> 31) != 0; }
CCB_HD bool sign_bit(double x) { return (double_bits(x) >> 63) != 0; }

// min (MAX false) or max of two values of a floating type A (float or double), as CUDA's __hmin /
// __hmax, which NCCL reduces half, bfloat16 and fp8 with: a NaN operand is ignored (two NaN give a
// NaN), and -0 is below +0. Computed in A itself: a double is never rounded to float.
template <bool MAX, typename A>
CCB_HD A narrow_minmax(A x, A y) {
  static_assert(std::is_same_v<A, float> || std::is_same_v<A, double>, "narrow_minmax: float or double");
  if (x != x) return y;
  if (y != y) return x;
  if (x == y) return sign_bit(x) == !MAX ? x : y;  // equal: +0 and -0 told apart
  return MAX ? (x > y ? x : y) : (x < y ? x : y);
}

// a (op) b. Integer sum and product wrap around (unsigned arithmetic), so results are exact in any
// order. Narrow floats compute in float and round the result (result_of); their min and max are
// narrow_minmax. avg reduces as sum; finalize() divides at the end.
template <typename T>
CCB_HD T reduce_pair(ReduceOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case ReduceOp::prod: return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
      case ReduceOp::min: return a < b ? a : b;
      case ReduceOp::max: return a > b ? a : b;
      default: return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    }
  } else {
    auto x = to_arith(a), y = to_arith(b);
    switch (op) {
      case ReduceOp::prod: return result_of<T>(x * y);
      case ReduceOp::min: return result_of<T>(narrow_minmax<false>(x, y));
      case ReduceOp::max: return result_of<T>(narrow_minmax<true>(x, y));
      default: return result_of<T>(x + y);
    }
  }
}

// The last step of a reduction: divides by the rank count for avg, the identity otherwise.
template <typename T>
CCB_HD T finalize(ReduceOp op, T v, int nranks) {
  if (op != ReduceOp::avg) return v;
  // Integers divide in 64 bits: nranks need not fit T (256 ranks cast to int8 would divide by 0).
  if constexpr (std::is_signed_v<T> && std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::int64_t>(v) / static_cast<std::int64_t>(nranks));
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::uint64_t>(v) / static_cast<std::uint64_t>(nranks));
  else return result_of<T>(to_arith(v) / static_cast<decltype(to_arith(v))>(nranks));
}

// Calls f(T{}) with the C++ type behind a DataType.
template <typename F>
decltype(auto) dispatch_type(DataType t, F&& f) {
  switch (t) {
    case DataType::int8: return f(std::int8_t{});
    case DataType::uint8: return f(std::uint8_t{});
    case DataType::int32: return f(std::int32_t{});
    case DataType::uint32: return f(std::uint32_t{});
    case DataType::int64: return f(std::int64_t{});
    case DataType::uint64: return f(std::uint64_t{});
    case DataType::float16: return f(half_t{});
    case DataType::bfloat16: return f(bfloat16_t{});
    case DataType::float32: return f(float{});
    case DataType::float64: return f(double{});
    case DataType::f8e4m3: return f(fp8_e4m3_t{});
    case DataType::f8e5m2: return f(fp8_e5m2_t{});
  }
  return f(float{});
}

}  // namespace ccbench
