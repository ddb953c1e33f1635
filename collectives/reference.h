#pragma once
// An independent reference for the checks: the exact result of a reduction over the ranks'
// inputs, computed apart from the code under test, one element at a time.
//
// Each floating input is decoded from its bits by the definition of its format (sign, biased
// exponent, fraction; subnormals; infinities and NaN; fp8 e4m3 without infinities), the values
// are reduced in long double (a 64-bit significand holds every sum, product, min and max the
// verifiable patterns produce, exactly), and the result is encoded by the format's definition,
// rounding to nearest even once. Two rules are the formats' as NCCL computes them, not IEEE's:
// fp8 sums, products, minima and maxima are rounded to half first, then to fp8, saturating at the
// largest finite value
// (CUDA's __NV_SATFINITE conversion, which NCCL's fp8 arithmetic goes through); min and max
// ignore a NaN operand and put -0 below +0 (CUDA's __hmin/__hmax). avg divides the exact sum by
// the rank count, rounding the quotient once, exactly (integer arithmetic). Integers wrap around
// (sum, prod) as unsigned arithmetic does; their avg divides a sum that cannot overflow.
//
// Nothing here uses collectives/numeric.h's conversions (to_float, from_float, result_of) or
// reduce_pair: tests/unit/test_reference.cpp holds reduced_value() (the fast expected values of
// every check, computed with that shared arithmetic) and the reduction loops to this reference.
// Host only, not for the timed path.
#include <cstdint>

#include "collectives/types.h"

namespace ccbench::reference {

// A binary floating-point format: exponent and fraction widths, and how the all-ones exponent is
// used (IEEE: infinities and NaNs; fn: e4m3's only NaN is S.1111.111, the rest are finite).
struct FloatFormat {
  int exponent_bits;
  int fraction_bits;
  bool ieee_specials;  // false: e4m3 (no infinity)
  bool saturates;      // results beyond the largest finite value saturate to it (fp8)
};

inline constexpr FloatFormat kHalf{5, 10, true, false};
inline constexpr FloatFormat kBfloat16{8, 7, true, false};
inline constexpr FloatFormat kFloat{8, 23, true, false};
inline constexpr FloatFormat kDouble{11, 52, true, false};
inline constexpr FloatFormat kE4m3{4, 3, false, true};
inline constexpr FloatFormat kE5m2{5, 2, true, true};

// The format of a floating DataType (float16 ... f8e5m2); throws Error(runtime) for integers.
const FloatFormat& format_of(DataType t);

// The value of `bits` in format f (NaN as a quiet NaN).
long double decode(std::uint64_t bits, const FloatFormat& f);
// x in format f, rounded to nearest even; NaN becomes the positive quiet NaN of f (e4m3: 0x7f).
std::uint64_t encode(long double x, const FloatFormat& f);
// n / d rounded to nearest even in format f, exactly (n, d integers, d > 0, |n| < 2^63).
std::uint64_t encode_quotient(std::int64_t n, std::int64_t d, const FloatFormat& f);

// op over the n elements at `inputs` (each sizeof(type) bytes, little-endian), finalised (avg
// divided by n), written to `out`. One input (n = 1) is the result as it is, but for avg.
void reduce(DataType type, ReduceOp op, const void* inputs, int n, void* out);

// The reference result of element `index` of an all-reduce over `nranks` ranks (the ranks'
// inputs from collectives/verifiable.h's input_value with `pattern`), written to `out`.
void reduced(DataType type, ReduceOp op, std::uint64_t seed, std::uint64_t index, int nranks, InputPattern pattern,
             void* out);

}  // namespace ccbench::reference
