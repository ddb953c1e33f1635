#pragma once
// Element types and reductions shared by host code and CUDA kernels (header-only, no CUDA needed).
// half_t and bfloat16_t are 16-bit storage types bit-compatible with CUDA's __half and
// __nv_bfloat16; host arithmetic converts through float with round-to-nearest-even.
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "collectives/types.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
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

template <typename T>
inline constexpr bool is_half_like = std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>;

// Arithmetic value of an element (wide type for halves) and back.
template <typename T>
CCB_HD auto to_arith(T v) {
  if constexpr (is_half_like<T>) return v.to_float();
  else return v;
}
template <typename T, typename A>
CCB_HD T from_arith(A v) {
  if constexpr (is_half_like<T>) return T::from_float(static_cast<float>(v));
  else return static_cast<T>(v);
}

// a (op) b. Integer sum and product wrap around (unsigned arithmetic), so results are exact in any
// order. avg reduces as sum; finalize() divides at the end.
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
      case ReduceOp::prod: return from_arith<T>(x * y);
      case ReduceOp::min: return from_arith<T>(x < y ? x : y);
      case ReduceOp::max: return from_arith<T>(x > y ? x : y);
      default: return from_arith<T>(x + y);
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
  else return from_arith<T>(to_arith(v) / static_cast<decltype(to_arith(v))>(nranks));
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
  }
  return f(float{});
}

}  // namespace ccbench
