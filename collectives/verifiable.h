#pragma once
// Inputs whose exact result is known whatever the reduction order (as nccl-tests' verifiable
// inputs). Header-only, usable in CUDA kernels: the GPU fills and checks buffers with the same
// functions as the CPU.
//
// Element `index` of rank `rank`'s input is a function of (seed, rank, index) alone. For each op
// the values are bounded so that every partial result is exactly representable:
//   sum   integers: any value (wrap-around is exact); floats: |v| <= B-1 with ranks*(B-1) below
//         the type's exact-integer limit (2^11 half, 2^8 bfloat16, 2^24 float, 2^53 double);
//   prod  integers: odd values (the product never collapses to 0); floats: +-2^e with e in
//         {-1,0,1} on at most E ranks (E fits the exponent range), +-1 elsewhere;
//   min/max and data movement: any value (floats: integers below the exact limit);
//   avg   integers: non-negative values whose sum fits, compared exactly. Floats: NCCL
//         pre-multiplies every input by 1/ranks, which rounds, so the check needs a tolerance; for
//         one rank's wrong input to stay visible through it at any rank count, each element has
//         only kAvgActiveRanks ranks with a non-zero input (integers in [8, 16), a window of ranks
//         that moves with the index). The average is then at most 2*16/n and the rounding a few
//         units of its last place (value_matches), far below the 1/n that an input off by one
//         moves it. fp8 (3 or 2 fraction bits, and a 1/n rounded to fp8 that is off by up to 6 %
//         or 12 %) takes another pattern: one rank per element holds +-2^a, so that NCCL's
//         fp8(1/n) * 2^a is exactly the rounded average while 1/n is a normal fp8 number, and
//         the check is exact there, seeing any input off by one (fp8_avg_tolerance gives the
//         bound past it, where a doubled input is still seen: tests/unit/test_numeric.cpp).
//
// fp8 limits: integers are exact to 16 (e4m3) and 8 (e5m2), so a sum has at most 15 or 7 ranks
// with non-zero inputs of magnitude 1 (every rank from 2 ranks on, with larger values); a product
// has a factor 2 or 1/2 on at most 8 (e4m3) or 15 (e5m2) ranks.
//
// That is the integer pattern (InputPattern::integer, the default). The precision pattern
// (--pattern precision) keeps every result exact in any order but needs what the integer one
// never touches: for a floating type with p significant bits,
//   sum   m * 2^s with |m| up to (2^p - 1) / ranks (the sum needs all p bits) and s one of three
//         scales per element (precision_sum_scale: near 1, near the top of the range, and the
//         subnormal quantum), plus elements where every rank holds -0 (the sum is -0), where the
//         ranks hold +-0 at random, and where one rank holds a NaN (the sum is NaN);
//   prod  float, double: one rank per element holds a full-p-bit value at a random exponent,
//         the others the integer pattern's +-2^e and +-1 (narrow floats: the integer pattern);
//   min/max  float, double: full-p-bit values of either sign over the whole normal exponent range
//         (double: far beyond float's range and precision); narrow floats: every bit pattern
//         (subnormals, +-0, infinities, NaN: min/max ignore a NaN and put -0 below +0);
//   data movement: every bit pattern of the type, compared bit for bit;
//   avg   as the integer pattern. Integer types: as the integer pattern (already every value).
#include <cstdint>

#include "collectives/numeric.h"

namespace ccbench {

CCB_HD std::uint64_t mix64(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

CCB_HD std::uint64_t element_hash(std::uint64_t seed, int rank, std::uint64_t index) {
  return mix64(seed ^ mix64(index * 0x100000001b3ull + static_cast<std::uint64_t>(rank) + 1));
}

// Largest integer M such that every integer in [-M, M] is exact in T (floats only).
template <typename T>
CCB_HD double exact_integer_limit() {
  if constexpr (std::is_same_v<T, half_t>) return 2048.0;
  else if constexpr (std::is_same_v<T, bfloat16_t>) return 256.0;
  else if constexpr (std::is_same_v<T, fp8_e4m3_t>) return 16.0;
  else if constexpr (std::is_same_v<T, fp8_e5m2_t>) return 8.0;
  else if constexpr (std::is_same_v<T, float>) return 16777216.0;
  else return 9007199254740992.0;
}

// Ranks allowed a factor of 2 or 1/2 in a float product: keeps |exponent| within range.
template <typename T>
CCB_HD int product_exponent_budget() {
  if constexpr (std::is_same_v<T, half_t>) return 14;
  else if constexpr (std::is_same_v<T, fp8_e4m3_t>) return 8;   // 2^+-8 within [2^-9, 448]
  else if constexpr (std::is_same_v<T, fp8_e5m2_t>) return 15;  // 2^+-15 within [2^-16, 57344]
  else if constexpr (std::is_same_v<T, double>) return 1000;
  else return 120;
}

// Bound B of the float sum pattern: values in [-(B-1), B-1].
template <typename T>
CCB_HD std::int64_t float_sum_bound(int nranks) {
  double b = exact_integer_limit<T>() / (nranks > 0 ? nranks : 1);
  if (b > 1048576.0) b = 1048576.0;
  return b < 2.0 ? 2 : static_cast<std::int64_t>(b);
}

// Ranks that contribute a non-zero value to float sums; the rest contribute 0, so that even
// thousands of bfloat16 ranks keep the sum exact.
template <typename T>
CCB_HD int float_sum_active_ranks(int nranks) {
  double cap = exact_integer_limit<T>() - 1;
  return nranks <= cap ? nranks : static_cast<int>(cap);
}

// The float avg pattern: at element `index`, ranks first..first+kAvgActiveRanks-1 (mod n) hold
// an integer in [kAvgLow, kAvgLow + kAvgSpan), the others 0. Small integers keep the partial sums
// exact in every type (bfloat16 is exact to 256) and the result's rounding small against 1/n.
inline constexpr int kAvgActiveRanks = 2;
inline constexpr int kAvgLow = 8;
inline constexpr int kAvgSpan = 8;

// fp8 avg: one active rank per element, holding +-2^a with a in [a0, a0 + mantissa bits]: at
// a0 = 0 (n <= 64 for e4m3, n <= 16384 for e5m2) an input off by one then moves the rounded
// average (2^a + 1 keeps a bit the result still has), so the exact check sees it.
template <typename T>
CCB_HD constexpr int fp8_avg_exponents() {
  return T::kMantissa + 1;
}

template <typename T>
CCB_HD constexpr int avg_active_ranks() {
  if constexpr (is_fp8<T>) return 1;
  else return kAvgActiveRanks;
}

template <typename T>
CCB_HD bool avg_rank_active(std::uint64_t seed, int rank, std::uint64_t index, int nranks) {
  const int first = static_cast<int>(element_hash(seed, -1, index) % static_cast<std::uint64_t>(nranks));
  const int offset = (rank - first + nranks) % nranks;
  return offset < avg_active_ranks<T>();
}

// a0 of the fp8 avg pattern: the smallest exponent that keeps 2^a0 / n a normal number, so that
// every exponent of the pattern gives a normal average (capped: 2^(a0 + 3) must be an fp8 value).
template <typename T>
CCB_HD int fp8_avg_first_exponent(int nranks) {
  int log2_ceil = 0;
  while ((1 << log2_ceil) < nranks && log2_ceil < 30) ++log2_ceil;
  const int a0 = log2_ceil + 1 - T::kBias;
  const int top = T::kMaxExponent - (fp8_avg_exponents<T>() - 1);  // largest a0
  return a0 < 0 ? 0 : a0 > top ? top : a0;
}

// The largest rank count whose 1/n is a normal fp8 number: 64 (e4m3), 16384 (e5m2).
template <typename T>
CCB_HD constexpr int fp8_avg_exact_ranks() {
  return 1 << (T::kBias - 1);
}

// The relative error the fp8 avg check allows at n ranks: 0 up to fp8_avg_exact_ranks (NCCL's
// fp8(1/n) * 2^a is then the rounded average itself); past that, the error of NCCL's subnormal
// fp8(1/n) plus the rounding of the average, relative to the rounded average:
// (|fp8(1/n) n - 1| + u) / (1 - u), u = 2^-(mantissa + 1).
template <typename T>
CCB_HD double fp8_avg_tolerance(int nranks) {
  if (nranks <= fp8_avg_exact_ranks<T>()) return 0.0;
  const T scale = T::from_float(static_cast<float>(1.0 / nranks));
  const double u = 1.0 / (2 << T::kMantissa);
  double err = static_cast<double>(scale.to_float()) * nranks - 1;
  if (err < 0) err = -err;
  return (err + u) / (1 - u);
}

// Machine epsilon of a floating type: the distance from 1 to the next value.
template <typename T>
CCB_HD double machine_epsilon() {
  if constexpr (is_fp8<T>) return 1.0 / (1 << T::kMantissa);           // 3 (e4m3) or 2 (e5m2) fraction bits
  else if constexpr (std::is_same_v<T, half_t>) return 1.0 / 1024;     // 10 fraction bits
  else if constexpr (std::is_same_v<T, bfloat16_t>) return 1.0 / 128;  // 7 fraction bits
  else if constexpr (std::is_same_v<T, float>) return 1.1920928955078125e-7;
  else return 2.220446049250313e-16;
}

// Input element `index` of `rank` of the integer pattern for a collective reducing with `op`
// (ReduceOp::none for data movement: all-gather, broadcast, sendrecv).
template <typename T>
CCB_HD T integer_input(ReduceOp op, std::uint64_t seed, int rank, std::uint64_t index, int nranks) {
  const std::uint64_t h = element_hash(seed, rank, index);
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (op == ReduceOp::prod) return static_cast<T>(static_cast<U>(h | 1u));
    if (op == ReduceOp::avg) {
      // Non-negative values whose sum over all ranks fits T.
      std::uint64_t maxpos = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
      std::uint64_t b = maxpos / static_cast<std::uint64_t>(nranks);
      if (b > (1u << 20)) b = 1u << 20;
      return static_cast<T>(b ? h % (b + 1) : 0);
    }
    return static_cast<T>(static_cast<U>(h));
  } else {
    using A = decltype(to_arith(T{}));
    if (op == ReduceOp::prod) {
      int e = 0;
      if (rank < product_exponent_budget<T>()) e = static_cast<int>(h % 3) - 1;
      A v = e > 0 ? A(2) : e < 0 ? A(0.5) : A(1);
      return from_arith<T>((h >> 8) & 1 ? -v : v);
    }
    if (op == ReduceOp::avg) {
      if (!avg_rank_active<T>(seed, rank, index, nranks)) return from_arith<T>(A(0));
      if constexpr (is_fp8<T>) {
        const int a = fp8_avg_first_exponent<T>(nranks) + static_cast<int>(h % fp8_avg_exponents<T>());
        const A v = static_cast<A>(1u << a);
        return from_arith<T>((h >> 8) & 1 ? -v : v);
      }
      return from_arith<T>(static_cast<A>(kAvgLow + static_cast<int>(h % kAvgSpan)));
    }
    if (op == ReduceOp::sum) {
      if (rank >= float_sum_active_ranks<T>(nranks)) return from_arith<T>(A(0));
      const std::int64_t b = float_sum_bound<T>(nranks);
      return from_arith<T>(static_cast<A>(static_cast<std::int64_t>(h % (2 * b - 1)) - (b - 1)));
    }
    // min, max, data movement: integers within the exact range.
    const std::int64_t m =
        static_cast<std::int64_t>(exact_integer_limit<T>() > 1048576.0 ? 1048576.0 : exact_integer_limit<T>());
    return from_arith<T>(static_cast<A>(static_cast<std::int64_t>(h % (2 * m + 1)) - m));
  }
}

// ---- the precision pattern ------------------------------------------------------------------

// Significant bits p of a floating type (the implicit bit included), and the exponents of its
// smallest normal and largest finite values.
template <typename T>
CCB_HD constexpr int significant_bits() {
  if constexpr (is_fp8<T>) return T::kMantissa + 1;
  else if constexpr (std::is_same_v<T, half_t>) return 11;
  else if constexpr (std::is_same_v<T, bfloat16_t>) return 8;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else return 53;
}
template <typename T>
CCB_HD constexpr int min_normal_exponent() {
  if constexpr (is_fp8<T>) return 1 - T::kBias;
  else if constexpr (std::is_same_v<T, half_t>) return -14;
  else if constexpr (std::is_same_v<T, double>) return -1022;
  else return -126;  // float, bfloat16
}
template <typename T>
CCB_HD constexpr int max_exponent() {
  if constexpr (is_fp8<T>) return T::kMaxExponent;
  else if constexpr (std::is_same_v<T, half_t>) return 15;
  else if constexpr (std::is_same_v<T, double>) return 1023;
  else return 127;  // float, bfloat16
}

// 2^e exactly, for e from the smallest subnormal exponent of A (float or double) to its largest.
template <typename A>
CCB_HD A pow2(int e) {
  if constexpr (std::is_same_v<A, float>)
    return e >= -126 ? bits_float(static_cast<std::uint32_t>(e + 127) << 23) : bits_float(1u << (e + 149));
  else return e >= -1022 ? bits_double(static_cast<std::uint64_t>(e + 1023) << 52) : bits_double(1ull << (e + 1074));
}

// The scales s of the precision sum pattern, where m * 2^s with |m| < 2^p is exact and finite in
// T: near 1 (double: below float's precision), near the top of the range (double: beyond float's
// largest value), and the subnormal quantum 2^(emin - p + 1), where every sum stays exact.
template <typename T>
CCB_HD int precision_sum_scale(int which) {
  constexpr int p = significant_bits<T>();
  constexpr int top = max_exponent<T>() + 1 - p;  // m * 2^top < 2^(emax + 1)
  if (which == 0) return std::is_same_v<T, double> ? -40 : std::is_same_v<T, float> ? -20 : 0;
  if (which == 1) return top - 1 < 200 ? top - 1 : 200;
  return min_normal_exponent<T>() - (p - 1);
}

template <typename T>
CCB_HD T quiet_nan() {
  if constexpr (std::is_same_v<T, double>) return bits_double(0x7ff8000000000000ull);
  else return from_arith<T>(bits_float(0x7fc00000u));
}

// A value of T's whole precision: +-(2^(p-1) + f) * 2^(e - p + 1), f from p-1 bits of a hash of h.
template <typename T>
CCB_HD T full_precision_value(std::uint64_t h, int e, bool negative) {
  using A = decltype(to_arith(T{}));
  constexpr int p = significant_bits<T>();
  const std::uint64_t f = mix64(h) & ((std::uint64_t{1} << (p - 1)) - 1);
  const A v = static_cast<A>((std::uint64_t{1} << (p - 1)) + f) * pow2<A>(e - (p - 1));
  return from_arith<T>(negative ? -v : v);
}

// The element whose bits are the low bits of h: every pattern of the type, NaNs included.
template <typename T>
CCB_HD T any_bits(std::uint64_t h) {
  T v;
  memcpy(&v, &h, sizeof(T));  // little-endian: the low bytes
  return v;
}

// The precision sum pattern (the top of this file). `cls` is the element's class, the same on
// every rank.
template <typename T>
CCB_HD T precision_sum_input(std::uint64_t h, std::uint64_t cls, int rank, int nranks) {
  using A = decltype(to_arith(T{}));
  switch (cls % 8) {
    case 0: return from_arith<T>(-A(0));  // every rank -0: the sum is -0
    case 1:                               // one rank a NaN: the sum is NaN
      if (rank == static_cast<int>((cls >> 8) % static_cast<std::uint64_t>(nranks))) return quiet_nan<T>();
      break;
    case 2: return from_arith<T>((h >> 32) & 1 ? -A(0) : A(0));  // +-0: -0 only if every rank holds -0
    default: break;
  }
  constexpr std::int64_t kLimit = (std::int64_t{1} << significant_bits<T>()) - 1;  // |sum| <= 2^p - 1
  const std::int64_t active = nranks < kLimit ? nranks : kLimit;
  if (rank >= active) return from_arith<T>(A(0));
  const std::int64_t bound = kLimit / active;
  const std::int64_t m = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(2 * bound + 1)) - bound;
  return from_arith<T>(static_cast<A>(m) * pow2<A>(precision_sum_scale<T>(static_cast<int>((cls >> 16) % 3))));
}

// The precision product pattern of float and double: one carrier rank per element holds a value of
// full precision at an exponent the other ranks' factors 2^+-1 cannot push out of the normal range.
template <typename T>
CCB_HD T precision_prod_input(std::uint64_t seed, std::uint64_t h, std::uint64_t cls, int rank, std::uint64_t index,
                              int nranks) {
  if (rank != static_cast<int>((cls >> 8) % static_cast<std::uint64_t>(nranks)))
    return integer_input<T>(ReduceOp::prod, seed, rank, index, nranks);
  const int budget = nranks < product_exponent_budget<T>() ? nranks : product_exponent_budget<T>();
  const int lo = min_normal_exponent<T>() + budget, hi = max_exponent<T>() - budget - 1;
  const int e = lo + static_cast<int>((h >> 40) % static_cast<std::uint64_t>(hi - lo + 1));
  return full_precision_value<T>(h, e, (h >> 39) & 1);
}

// Input element `index` of rank `rank` of the precision pattern (floating types).
template <typename T>
CCB_HD T precision_input(ReduceOp op, std::uint64_t seed, int rank, std::uint64_t index, int nranks) {
  const std::uint64_t h = element_hash(seed, rank, index);
  const std::uint64_t cls = element_hash(seed, -2, index);
  switch (op) {
    case ReduceOp::sum: return precision_sum_input<T>(h, cls, rank, nranks);
    case ReduceOp::prod:
      if constexpr (is_narrow_float<T>) return integer_input<T>(op, seed, rank, index, nranks);
      else return precision_prod_input<T>(seed, h, cls, rank, index, nranks);
    case ReduceOp::min:
    case ReduceOp::max:
      if constexpr (is_narrow_float<T>) {
        return any_bits<T>(h);
      } else {
        constexpr int lo = min_normal_exponent<T>(), hi = max_exponent<T>();
        return full_precision_value<T>(h, lo + static_cast<int>((h >> 40) % (hi - lo + 1)), (h >> 39) & 1);
      }
    case ReduceOp::none: return any_bits<T>(h);
    default: return integer_input<T>(op, seed, rank, index, nranks);  // avg
  }
}

// Input element `index` of rank `rank` of `pattern` for a collective reducing with `op`.
template <typename T>
CCB_HD T input_value(ReduceOp op, std::uint64_t seed, int rank, std::uint64_t index, int nranks,
                     InputPattern pattern = InputPattern::integer) {
  if constexpr (!std::is_integral_v<T>)
    if (pattern == InputPattern::precision) return precision_input<T>(op, seed, rank, index, nranks);
  return integer_input<T>(op, seed, rank, index, nranks);
}

// The exact reduction over all ranks of element `index` (before finalize for avg handling:
// this returns the final value, divided for avg). tests/unit/test_reference.cpp proves it equal,
// bit for bit, to an independent reference (collectives/reference.h) for every type, op and
// pattern at many rank counts.
template <typename T>
CCB_HD T reduced_value(ReduceOp op, std::uint64_t seed, std::uint64_t index, int nranks,
                       InputPattern pattern = InputPattern::integer) {
  if (op == ReduceOp::avg) {
    // Sum in a wide type, then divide, as an exact reference.
    if constexpr (std::is_integral_v<T>) {
      std::uint64_t s = 0;
      for (int r = 0; r < nranks; ++r)
        s += static_cast<std::uint64_t>(input_value<T>(op, seed, r, index, nranks, pattern));
      return static_cast<T>(s / static_cast<std::uint64_t>(nranks));
    } else {
      double s = 0;
      for (int r = 0; r < nranks; ++r)
        s += static_cast<double>(to_arith(input_value<T>(op, seed, r, index, nranks, pattern)));
      return from_arith<T>(s / nranks);
    }
  }
  T acc = input_value<T>(op, seed, 0, index, nranks, pattern);
  for (int r = 1; r < nranks; ++r) acc = reduce_pair<T>(op, acc, input_value<T>(op, seed, r, index, nranks, pattern));
  return acc;
}

// Whether two elements have the same bits.
template <typename T>
CCB_HD bool same_bits(T a, T b) {
  const unsigned char* x = reinterpret_cast<const unsigned char*>(&a);
  const unsigned char* y = reinterpret_cast<const unsigned char*>(&b);
  bool same = true;
  for (unsigned k = 0; k < sizeof(T); ++k) same &= x[k] == y[k];
  return same;
}

// The float avg tolerance in units of eps * |expected|: the bound above (1.5 for two terms) plus
// the rounding of the expected value itself (0.5), with a margin; still below what an input off
// by one moves the average (1/n, against a magnitude of at most 2 (kAvgLow + kAvgSpan - 1) / n =
// 30/n: 3 * eps(bfloat16) * 30 = 0.70 < 1).
inline constexpr double kAvgToleranceEps = 3.0;

// Whether `actual` is an acceptable result where `expected` is the exact one. Exact for every
// case but float avg, which allows the rounding of NCCL's pre-multiplied sum: each of the
// kAvgActiveRanks non-zero terms v * fl(1/n) carries two roundings, their sum one more, so the
// error stays below (2 kAvgActiveRanks - 1) / 2 eps |expected|; sum-then-divide rounds once.
// fp8 avg: fp8_avg_tolerance (0, exact, while fp8(1/n) is normal).
// Everything else is compared bit for bit (+0 and -0 told apart), but for an expected NaN of a
// reduction, which any NaN matches (NaN payloads differ between processors and libraries).
template <typename T>
CCB_HD bool value_matches(ReduceOp op, T expected, T actual, int nranks) {
  if constexpr (std::is_integral_v<T>) {
    return expected == actual;
  } else {
    double e = static_cast<double>(to_arith(expected)), a = static_cast<double>(to_arith(actual));
    if (e != e && op != ReduceOp::none) return a != a;
    if (op != ReduceOp::avg) return same_bits(expected, actual);
    if (a != a) return false;  // NaN never matches
    (void)nranks;
    const double magnitude = e < 0 ? -e : e;
    const double diff = a > e ? a - e : e - a;
    if constexpr (is_fp8<T>) return diff <= fp8_avg_tolerance<T>(nranks) * magnitude;
    else return diff <= kAvgToleranceEps * machine_epsilon<T>() * magnitude;
  }
}

}  // namespace ccbench

namespace ccbench {

// Input element `index` of rank `rank` for collective `coll`. All-reduce, reduce-scatter: the op's
// pattern; data movement collectives: the op-free pattern.
template <typename T>
CCB_HD T collective_input(Collective coll, ReduceOp op, std::uint64_t seed, int rank, std::uint64_t index, int nranks,
                          InputPattern pattern = InputPattern::integer) {
  return input_value<T>(has_reduce_op(coll) ? op : ReduceOp::none, seed, rank, index, nranks, pattern);
}

// Expected element j of rank `rank`'s output for collective `coll` with `count` elements per rank
// (see CollectiveShape). Root-only collectives (reduce, gather) give the root's output on every
// rank; only the root's is compared (output_elements).
template <typename T>
CCB_HD T collective_expected(Collective coll, ReduceOp op, std::uint64_t seed, int rank, int nranks, int root,
                             std::uint64_t count, std::uint64_t j, InputPattern pattern = InputPattern::integer) {
  const int block = count ? static_cast<int>(j / count) : 0;  // the block j lies in (n-block outputs)
  switch (coll) {
    case Collective::allreduce:
    case Collective::reduce: return reduced_value<T>(op, seed, j, nranks, pattern);
    case Collective::reducescatter:
      return reduced_value<T>(op, seed, static_cast<std::uint64_t>(rank) * count + j, nranks, pattern);
    case Collective::allgather:
    case Collective::gather:  // block p is rank p's input
      return input_value<T>(ReduceOp::none, seed, block, j % count, nranks, pattern);
    case Collective::broadcast: return input_value<T>(ReduceOp::none, seed, root, j, nranks, pattern);
    case Collective::sendrecv:
      return input_value<T>(ReduceOp::none, seed, (rank + nranks - 1) % nranks, j, nranks, pattern);
    case Collective::alltoall:  // block p came from rank p's block `rank`
      return input_value<T>(ReduceOp::none, seed, block, static_cast<std::uint64_t>(rank) * count + j % count, nranks,
                            pattern);
    case Collective::alltoallv: {
      int from = 0;
      while (from + 1 < nranks && alltoallv_recv_offset(rank, from + 1, nranks, count) <= j) ++from;
      const std::uint64_t within = j - alltoallv_recv_offset(rank, from, nranks, count);
      return input_value<T>(ReduceOp::none, seed, from, alltoallv_send_offset(from, rank, nranks, count) + within,
                            nranks, pattern);
    }
    case Collective::scatter:  // my block of the root's input
      return input_value<T>(ReduceOp::none, seed, root, static_cast<std::uint64_t>(rank) * count + j, nranks, pattern);
  }
  return T{};
}

}  // namespace ccbench
