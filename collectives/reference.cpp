#include "collectives/reference.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "collectives/verifiable.h"
#include "core/error.h"

namespace ccbench::reference {

namespace {

int bias(const FloatFormat& f) { return (1 << (f.exponent_bits - 1)) - 1; }
int min_exponent(const FloatFormat& f) { return 1 - bias(f); }
std::uint64_t all_ones(int bits) { return (std::uint64_t{1} << bits) - 1; }

// The largest finite value: the all-ones exponent is a special one in IEEE formats; e4m3 uses it
// for finite values but for its all-ones fraction (NaN).
long double max_finite(const FloatFormat& f) {
  const int top = static_cast<int>(all_ones(f.exponent_bits)) - (f.ieee_specials ? 1 : 0) - bias(f);
  const std::uint64_t fraction = all_ones(f.fraction_bits) - (f.ieee_specials ? 0 : 1);
  return std::ldexp(static_cast<long double>((std::uint64_t{1} << f.fraction_bits) + fraction), top - f.fraction_bits);
}

std::uint64_t sign_bit(const FloatFormat& f) { return std::uint64_t{1} << (f.exponent_bits + f.fraction_bits); }

std::uint64_t quiet_nan(const FloatFormat& f) {
  const std::uint64_t exponent = all_ones(f.exponent_bits) << f.fraction_bits;
  return f.ieee_specials ? exponent | (std::uint64_t{1} << (f.fraction_bits - 1))
                         : exponent | all_ones(f.fraction_bits);
}

std::uint64_t infinity_or_max(bool negative, const FloatFormat& f) {
  const std::uint64_t s = negative ? sign_bit(f) : 0;
  if (!f.saturates) return s | (all_ones(f.exponent_bits) << f.fraction_bits);
  return s | encode(max_finite(f), f);
}

// The bits of a value known to be representable in f (after rounding): sign, exponent, fraction.
std::uint64_t pack(bool negative, long double a, const FloatFormat& f) {
  const std::uint64_t s = negative ? sign_bit(f) : 0;
  if (a == 0) return s;
  int e2 = 0;
  std::frexp(a, &e2);  // a = m * 2^e2, m in [0.5, 1): the exponent of a is e2 - 1
  const int e = e2 - 1;
  if (e < min_exponent(f))  // subnormal: the fraction counts quanta of 2^(emin - fraction_bits)
    return s | static_cast<std::uint64_t>(std::ldexp(a, f.fraction_bits - min_exponent(f)));
  const auto significand = static_cast<std::uint64_t>(std::ldexp(a, f.fraction_bits - e));
  const std::uint64_t exponent = static_cast<std::uint64_t>(e + bias(f)) << f.fraction_bits;
  return s | exponent | (significand - (std::uint64_t{1} << f.fraction_bits));
}

// Exact integer arithmetic on the avg of integer types: the sum fits (the pattern keeps it so).
template <typename T>
T integer_reduce(ReduceOp op, const T* v, int n) {
  using U = std::make_unsigned_t<T>;
  using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
  Wide acc = v[0];
  std::uint64_t bits = static_cast<U>(v[0]);
  for (int r = 1; r < n; ++r) {
    const Wide x = v[r];
    switch (op) {
      case ReduceOp::min: acc = x < acc ? x : acc; break;
      case ReduceOp::max: acc = x > acc ? x : acc; break;
      case ReduceOp::prod: bits *= static_cast<U>(v[r]); break;
      default: bits += static_cast<U>(v[r]); break;  // sum, avg (non-negative inputs)
    }
  }
  if (op == ReduceOp::min || op == ReduceOp::max) return static_cast<T>(acc);
  if (op == ReduceOp::avg) return static_cast<T>(bits / static_cast<std::uint64_t>(n));
  return static_cast<T>(static_cast<U>(bits));  // wraps around: modulo 2^bits
}

// min (MAX false) or max: a NaN is ignored, -0 is below +0.
template <bool MAX>
long double select(long double a, long double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) == !MAX ? a : b;
  return (a < b) == MAX ? b : a;
}

long double fold(ReduceOp op, const std::vector<long double>& v) {
  long double acc = v[0];
  for (std::size_t r = 1; r < v.size(); ++r) {
    switch (op) {
      case ReduceOp::min: acc = select<false>(acc, v[r]); break;
      case ReduceOp::max: acc = select<true>(acc, v[r]); break;
      case ReduceOp::prod: acc *= v[r]; break;
      default: acc += v[r]; break;  // sum, avg
    }
  }
  return acc;
}

// The avg of floats: the exact sum (whole numbers in the avg patterns) divided once.
std::uint64_t float_average(long double sum, int n, const FloatFormat& f) {
  if (std::isnan(sum)) return quiet_nan(f);
  if (sum != std::trunc(sum) || std::fabs(sum) >= 0x1p62L)
    fail(ExitCode::runtime, "reference avg: the sum {} is not a whole number below 2^62", static_cast<double>(sum));
  return encode_quotient(static_cast<std::int64_t>(sum), n, f);
}

std::uint64_t element_bits(const void* p, std::size_t size) {
  std::uint64_t b = 0;
  std::memcpy(&b, p, size);
  return b;
}

void float_reduce(DataType type, ReduceOp op, const void* inputs, int n, void* out) {
  const FloatFormat& f = format_of(type);
  const std::size_t size = element_size(type);
  std::vector<long double> v(static_cast<std::size_t>(n));
  for (std::size_t r = 0; r < v.size(); ++r)
    v[r] = decode(element_bits(static_cast<const char*>(inputs) + r * size, size), f);
  const long double acc = fold(op, v);
  std::uint64_t bits = 0;
  if (op == ReduceOp::avg) bits = float_average(acc, n, f);
  else if (type == DataType::f8e4m3 || type == DataType::f8e5m2) bits = encode(decode(encode(acc, kHalf), kHalf), f);
  else bits = encode(acc, f);
  std::memcpy(out, &bits, size);
}

}  // namespace

const FloatFormat& format_of(DataType t) {
  switch (t) {
    case DataType::float16: return kHalf;
    case DataType::bfloat16: return kBfloat16;
    case DataType::float32: return kFloat;
    case DataType::float64: return kDouble;
    case DataType::f8e4m3: return kE4m3;
    case DataType::f8e5m2: return kE5m2;
    default: fail(ExitCode::runtime, "reference: {} is not a floating type", name(t));
  }
}

long double decode(std::uint64_t bits, const FloatFormat& f) {
  const bool negative = (bits & sign_bit(f)) != 0;
  const std::uint64_t exponent = (bits >> f.fraction_bits) & all_ones(f.exponent_bits);
  const std::uint64_t fraction = bits & all_ones(f.fraction_bits);
  const bool top = exponent == all_ones(f.exponent_bits);
  constexpr long double kInf = std::numeric_limits<long double>::infinity();
  constexpr long double kNan = std::numeric_limits<long double>::quiet_NaN();
  if (top && f.ieee_specials) return fraction ? kNan : negative ? -kInf : kInf;
  if (top && fraction == all_ones(f.fraction_bits)) return kNan;  // e4m3
  const long double a = exponent == 0
                            ? std::ldexp(static_cast<long double>(fraction), min_exponent(f) - f.fraction_bits)
                            : std::ldexp(static_cast<long double>((std::uint64_t{1} << f.fraction_bits) + fraction),
                                         static_cast<int>(exponent) - bias(f) - f.fraction_bits);
  return negative ? -a : a;
}

std::uint64_t encode(long double x, const FloatFormat& f) {
  if (std::isnan(x)) return quiet_nan(f);
  const bool negative = std::signbit(x);
  const long double a = std::fabs(x);
  if (std::isinf(a)) return infinity_or_max(negative, f);
  if (a == 0) return pack(negative, 0, f);
  int e2 = 0;
  std::frexp(a, &e2);
  const int e = e2 - 1 < min_exponent(f) ? min_exponent(f) : e2 - 1;
  const int quantum = e - f.fraction_bits;  // the exponent of the last place
  const long double rounded = std::ldexp(std::nearbyint(std::ldexp(a, -quantum)), quantum);  // to nearest even
  if (rounded > max_finite(f)) return infinity_or_max(negative, f);
  return pack(negative, rounded, f);
}

std::uint64_t encode_quotient(std::int64_t n, std::int64_t d, const FloatFormat& f) {
  if (n == 0) return 0;
  const bool negative = n < 0;
  const unsigned __int128 num = static_cast<unsigned __int128>(negative ? -n : n);
  const unsigned __int128 den = static_cast<unsigned __int128>(d);
  // e = floor(log2(num / den)), by comparing num with den * 2^e.
  int e = 0;
  for (unsigned __int128 x = num; x > 1; x >>= 1) ++e;
  for (unsigned __int128 x = den; x > 1; x >>= 1) --e;
  auto at_least = [&](int k) {  // num >= den * 2^k
    return k >= 0 ? num >= (den << k) : (num << -k) >= den;
  };
  if (!at_least(e)) --e;
  const int quantum = (e < min_exponent(f) ? min_exponent(f) : e) - f.fraction_bits;
  // q = num / (den * 2^quantum), rounded to nearest even.
  const unsigned __int128 scaled_num = quantum < 0 ? num << -quantum : num;
  const unsigned __int128 scaled_den = quantum > 0 ? den << quantum : den;
  unsigned __int128 q = scaled_num / scaled_den;
  const unsigned __int128 rem = scaled_num % scaled_den;
  if (2 * rem > scaled_den || (2 * rem == scaled_den && (q & 1))) ++q;
  const long double a = std::ldexp(static_cast<long double>(static_cast<std::uint64_t>(q)), quantum);
  if (a > max_finite(f)) return infinity_or_max(negative, f);
  return pack(negative, a, f);
}

void reduce(DataType type, ReduceOp op, const void* inputs, int n, void* out) {
  if (n < 1) fail(ExitCode::runtime, "reference: a reduction of {} inputs", n);
  if (n == 1 && op != ReduceOp::avg) {  // one rank: its input as it is, no arithmetic to round
    std::memcpy(out, inputs, element_size(type));
    return;
  }
  dispatch_type(type, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>) *static_cast<T*>(out) = integer_reduce(op, static_cast<const T*>(inputs), n);
    else float_reduce(type, op, inputs, n, out);
  });
}

void reduced(DataType type, ReduceOp op, std::uint64_t seed, std::uint64_t index, int nranks, InputPattern pattern,
             void* out) {
  const std::size_t size = element_size(type);
  std::vector<unsigned char> inputs(size * static_cast<std::size_t>(nranks));
  dispatch_type(type, [&](auto zero) {
    using T = decltype(zero);
    for (int r = 0; r < nranks; ++r) {
      const T v = input_value<T>(op, seed, r, index, nranks, pattern);
      std::memcpy(inputs.data() + static_cast<std::size_t>(r) * size, &v, size);
    }
  });
  reduce(type, op, inputs.data(), nranks, out);
}

}  // namespace ccbench::reference
