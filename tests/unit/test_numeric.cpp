// Element types and verifiable inputs (collectives/numeric.h, collectives/verifiable.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "collectives/numeric.h"
#include "collectives/verifiable.h"
#include "core/build_config.h"
#include "core/error.h"

#if CCBENCH_HAVE_CUDA
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

namespace ccbench {
namespace {

bool half_is_nan(std::uint16_t b) { return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0; }
bool bf16_is_nan(std::uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

// The correctly rounded (to nearest, ties to even) value of f in a binary format with `digits`
// significand bits, smallest exponent `min_exp` (of the form m * 2^e, m in [0.5, 1)) and largest
// finite value `max`: computed in double, exactly.
double round_reference(float f, int digits, int min_exp, double max) {
  if (f == 0 || !std::isfinite(f)) return f;
  int e = 0;
  std::frexp(static_cast<double>(f), &e);
  const double quantum = std::ldexp(1.0, std::max(e, min_exp) - digits);
  const double r = std::nearbyint(static_cast<double>(f) / quantum) * quantum;  // FE_TONEAREST: ties to even
  if (std::fabs(r) > max) return std::copysign(HUGE_VAL, r);
  return r == 0 ? std::copysign(0.0, f) : r;
}

TEST(Half, RoundTripsEveryBitPattern) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const half_t h{static_cast<std::uint16_t>(b)};
    const half_t back = half_t::from_float(h.to_float());
    if (half_is_nan(h.bits)) {
      EXPECT_TRUE(half_is_nan(back.bits)) << std::hex << b;  // payloads may change
    } else {
      EXPECT_EQ(back.bits, h.bits) << std::hex << b;
    }
  }
}

TEST(Bfloat16, RoundTripsEveryBitPattern) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const bfloat16_t h{static_cast<std::uint16_t>(b)};
    const bfloat16_t back = bfloat16_t::from_float(h.to_float());
    if (bf16_is_nan(h.bits)) {
      EXPECT_TRUE(bf16_is_nan(back.bits)) << std::hex << b;
    } else {
      EXPECT_EQ(back.bits, h.bits) << std::hex << b;
    }
  }
}

TEST(Half, RoundsToNearestEven) {
  // Ties between representable neighbours go to the even significand.
  EXPECT_EQ(half_t::from_float(1.0f + 0x1p-11f).bits, half_t::from_float(1.0f).bits);
  EXPECT_EQ(half_t::from_float(1.0f + 3 * 0x1p-11f).bits, half_t::from_float(1.0f + 0x1p-9f).bits);
  EXPECT_EQ(half_t::from_float(2049.0f).bits, half_t::from_float(2048.0f).bits);
  EXPECT_EQ(half_t::from_float(2051.0f).bits, half_t::from_float(2052.0f).bits);
  EXPECT_EQ(half_t::from_float(0x1p-25f).bits, 0u);                  // half the smallest subnormal: to 0
  EXPECT_EQ(half_t::from_float(3 * 0x1p-25f).bits, 2u);              // 1.5 subnormal quanta: to 2
  EXPECT_EQ(half_t::from_float(65519.0f).bits, 0x7bffu);             // below the overflow tie
  EXPECT_EQ(half_t::from_float(65520.0f).bits, 0x7c00u);             // the tie overflows to infinity
  // Against an exact reference over a spread of float bit patterns (normal, subnormal, huge).
  for (std::uint64_t u = 0; u < (1ull << 32); u += 997) {
    const std::uint32_t bits = static_cast<std::uint32_t>(u);
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    const float want = static_cast<float>(round_reference(f, 11, -13, 65504.0));
    const float got = half_t::from_float(f).to_float();
    ASSERT_EQ(float_bits(got), float_bits(want)) << "f=" << f << " bits " << std::hex << bits;
  }
}

TEST(Bfloat16, RoundsToNearestEven) {
  EXPECT_EQ(bfloat16_t::from_float(257.0f).bits, bfloat16_t::from_float(256.0f).bits);
  EXPECT_EQ(bfloat16_t::from_float(259.0f).bits, bfloat16_t::from_float(260.0f).bits);
  for (std::uint64_t u = 0; u < (1ull << 32); u += 997) {
    const std::uint32_t bits = static_cast<std::uint32_t>(u);
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    const float want = static_cast<float>(round_reference(f, 8, -125, 0x1.fep127));
    const float got = bfloat16_t::from_float(f).to_float();
    ASSERT_EQ(float_bits(got), float_bits(want)) << "f=" << f << " bits " << std::hex << bits;
  }
}

// ---- fp8 ----

// Float bit patterns that reach every rounding case of an 8-bit float: every sign, exponent and
// top 7 fraction bits, each with the low 16 bits below, exactly at and above the half-way point
// of every narrower format, and zero; then a stride over all floats.
template <typename F>
void for_rounding_cases(F f) {
  for (std::uint32_t top = 0; top < 65536; ++top)
    for (std::uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) f((top << 16) | low);
  for (std::uint64_t u = 0; u < (1ull << 32); u += 997) f(static_cast<std::uint32_t>(u));
}

template <typename T>
double fp8_largest() {
  return std::is_same_v<T, fp8_e4m3_t> ? 448.0 : 57344.0;
}

// Against an exact reference: round to nearest even with 4 (e4m3) or 3 (e5m2) significant bits
// and subnormals below 2^-6 or 2^-14, saturating at the largest finite value; NaN to 0x7f.
template <typename T>
void fp8_rounds_and_saturates() {
  const int digits = T::kMantissa + 1, min_exp = 2 - T::kBias;
  for_rounding_cases([&](std::uint32_t bits) {
    const float f = bits_float(bits);
    const T got = T::from_float(f);
    if (std::isnan(f)) {
      ASSERT_EQ(got.bits, 0x7f) << std::hex << bits;
      return;
    }
    double want = round_reference(f, digits, min_exp, fp8_largest<T>());
    if (std::isinf(want)) want = std::copysign(fp8_largest<T>(), want);  // saturation, infinities included
    ASSERT_EQ(static_cast<double>(got.to_float()), want) << "f=" << f << " bits " << std::hex << bits;
    ASSERT_EQ(got.bits & 0x80, (bits >> 24) & 0x80) << "sign of " << f;
  });
}

TEST(Fp8, E4m3RoundsToNearestEvenAndSaturates) {
  fp8_rounds_and_saturates<fp8_e4m3_t>();
  EXPECT_EQ(fp8_e4m3_t::from_float(464.0f).bits, 0x7e);   // the tie above 448 goes to 448 (even)
  EXPECT_EQ(fp8_e4m3_t::from_float(465.0f).bits, 0x7e);   // saturates: e4m3 has no infinity
  EXPECT_EQ(fp8_e4m3_t::from_float(-HUGE_VALF).bits, 0xfe);
  EXPECT_EQ(fp8_e4m3_t::from_float(0x1p-10f).bits, 0x00);  // half the smallest subnormal: to 0
  EXPECT_EQ(fp8_e4m3_t::from_float(0x1.8p-9f).bits, 0x02);  // 1.5 quanta: to 2
  EXPECT_TRUE(std::isnan(fp8_e4m3_t{0x7f}.to_float()) && std::isnan(fp8_e4m3_t{0xff}.to_float()));
}

TEST(Fp8, E5m2RoundsToNearestEvenAndSaturates) {
  fp8_rounds_and_saturates<fp8_e5m2_t>();
  EXPECT_EQ(fp8_e5m2_t::from_float(61439.0f).bits, 0x7b);
  EXPECT_EQ(fp8_e5m2_t::from_float(61440.0f).bits, 0x7b);  // the tie would round to 65536: saturates
  EXPECT_EQ(fp8_e5m2_t::from_float(HUGE_VALF).bits, 0x7b);  // __NV_SATFINITE: infinity saturates
  EXPECT_TRUE(std::isinf(fp8_e5m2_t{0xfc}.to_float()) && fp8_e5m2_t{0xfc}.to_float() < 0);
  EXPECT_TRUE(std::isnan(fp8_e5m2_t{0x7d}.to_float()));
}

TEST(Fp8, RoundTripsEveryBitPattern) {
  for (std::uint32_t b = 0; b < 256; ++b) {
    const fp8_e4m3_t x{static_cast<std::uint8_t>(b)};
    const fp8_e5m2_t y{static_cast<std::uint8_t>(b)};
    if ((b & 0x7f) != 0x7f) {
      EXPECT_EQ(fp8_e4m3_t::from_float(x.to_float()).bits, b) << std::hex << b;
    }
    const bool y_nan = (b & 0x7f) > 0x7c, y_inf = (b & 0x7f) == 0x7c;
    if (!y_nan && !y_inf) {
      EXPECT_EQ(fp8_e5m2_t::from_float(y.to_float()).bits, b) << std::hex << b;
    }
  }
}

#if CCBENCH_HAVE_CUDA
// Bit for bit as cuda_fp8.h (its host code, the same algorithm as the device's cvt.rn.satfinite):
// every fp8 value to float (through __half, as CUDA's operator float), and the rounding cases of
// float to fp8 with __NV_SATFINITE, what CUDA's constructors use.
template <typename T, typename Cuda>
void fp8_matches_cuda(__nv_fp8_interpretation_t interp) {
  for (std::uint32_t b = 0; b < 256; ++b) {
    Cuda c;
    c.__x = static_cast<__nv_fp8_storage_t>(b);
    const float ours = T{static_cast<std::uint8_t>(b)}.to_float(), cuda = static_cast<float>(c);
    // NaN: cuda_fp16's host code makes it 0x7fffffff, its device code (cvt) 0x7fffe000, as ours.
    if (std::isnan(cuda)) ASSERT_EQ(float_bits(ours), T::kNanFloat) << std::hex << b;
    else ASSERT_EQ(float_bits(ours), float_bits(cuda)) << std::hex << b;
  }
  for_rounding_cases([&](std::uint32_t bits) {
    const float f = bits_float(bits);
    ASSERT_EQ(T::from_float(f).bits, __nv_cvt_float_to_fp8(f, __NV_SATFINITE, interp)) << std::hex << bits;
    ASSERT_EQ(T::from_float(f).bits, static_cast<std::uint8_t>(Cuda(f).__x)) << std::hex << bits;
  });
}

TEST(Fp8, BitExactWithCudaFp8) {
  fp8_matches_cuda<fp8_e4m3_t, __nv_fp8_e4m3>(__NV_E4M3);
  fp8_matches_cuda<fp8_e5m2_t, __nv_fp8_e5m2>(__NV_E5M2);
}

// reduce_pair on every pair of fp8 values, NaN and both zeros included, against NCCL's own
// expression for each op (src/device/reduce_kernel.h: the inputs to __half, __hadd / __hmul /
// __hmin / __hmax, back to fp8 through the __half constructor, which saturates).
template <typename T, typename Cuda>
void fp8_pairs_reduce_as_nccl() {
  for (std::uint32_t a = 0; a < 256; ++a)
    for (std::uint32_t b = 0; b < 256; ++b) {
      Cuda x, y;
      x.__x = static_cast<__nv_fp8_storage_t>(a);
      y.__x = static_cast<__nv_fp8_storage_t>(b);
      const __half hx = static_cast<__half>(x), hy = static_cast<__half>(y);
      const T ta{static_cast<std::uint8_t>(a)}, tb{static_cast<std::uint8_t>(b)};
      const auto nccl = [](__half h) { return static_cast<std::uint8_t>(Cuda(h).__x); };
      ASSERT_EQ(reduce_pair<T>(ReduceOp::sum, ta, tb).bits, nccl(__hadd(hx, hy))) << std::hex << a << " + " << b;
      ASSERT_EQ(reduce_pair<T>(ReduceOp::prod, ta, tb).bits, nccl(__hmul(hx, hy))) << std::hex << a << " * " << b;
      ASSERT_EQ(reduce_pair<T>(ReduceOp::min, ta, tb).bits, nccl(__hmin(hx, hy))) << std::hex << a << " min " << b;
      ASSERT_EQ(reduce_pair<T>(ReduceOp::max, ta, tb).bits, nccl(__hmax(hx, hy))) << std::hex << a << " max " << b;
    }
}

TEST(Fp8, PairsReduceBitForBitAsNccl) {
  fp8_pairs_reduce_as_nccl<fp8_e4m3_t, __nv_fp8_e4m3>();
  fp8_pairs_reduce_as_nccl<fp8_e5m2_t, __nv_fp8_e5m2>();
}
#endif

// Narrow floats' min and max as CUDA's __hmin / __hmax (NCCL's): -0 below +0, a NaN ignored.
TEST(ReducePair, NarrowMinMaxOrderZerosAndIgnoreNaN) {
  const fp8_e4m3_t pz{0x00}, nz{0x80}, nan{0x7f}, two = fp8_e4m3_t::from_float(2);
  EXPECT_EQ(reduce_pair<fp8_e4m3_t>(ReduceOp::max, pz, nz).bits, 0x00);
  EXPECT_EQ(reduce_pair<fp8_e4m3_t>(ReduceOp::max, nz, pz).bits, 0x00);
  EXPECT_EQ(reduce_pair<fp8_e4m3_t>(ReduceOp::min, pz, nz).bits, 0x80);
  EXPECT_EQ(reduce_pair<fp8_e4m3_t>(ReduceOp::min, nz, pz).bits, 0x80);
  EXPECT_EQ(reduce_pair<fp8_e4m3_t>(ReduceOp::max, nan, two).bits, two.bits);
  EXPECT_EQ(reduce_pair<fp8_e4m3_t>(ReduceOp::min, two, nan).bits, two.bits);
  EXPECT_EQ(reduce_pair<half_t>(ReduceOp::max, half_t{0x8000}, half_t{0x0000}).bits, 0x0000);
  EXPECT_EQ(reduce_pair<bfloat16_t>(ReduceOp::min, bfloat16_t{0x0000}, bfloat16_t{0x8000}).bits, 0x8000);
}

TEST(ReducePair, IntegersWrapAround) {
  EXPECT_EQ(reduce_pair<std::int8_t>(ReduceOp::sum, 127, 1), -128);
  EXPECT_EQ(reduce_pair<std::uint8_t>(ReduceOp::sum, 255, 1), 0);
  EXPECT_EQ(reduce_pair<std::int32_t>(ReduceOp::sum, std::numeric_limits<std::int32_t>::max(), 1),
            std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(reduce_pair<std::uint64_t>(ReduceOp::sum, ~0ull, 2), 1u);
  EXPECT_EQ(reduce_pair<std::int64_t>(ReduceOp::sum, std::numeric_limits<std::int64_t>::max(), 1),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(reduce_pair<std::int8_t>(ReduceOp::prod, 16, 16), 0);
  EXPECT_EQ(reduce_pair<std::int8_t>(ReduceOp::prod, -3, 50), static_cast<std::int8_t>(-150 + 256));
  EXPECT_EQ(reduce_pair<std::int32_t>(ReduceOp::prod, 65536, 65536), 0);
  EXPECT_EQ(reduce_pair<std::uint32_t>(ReduceOp::prod, 0x10001u, 0x10001u), 0x20001u);
  EXPECT_EQ(reduce_pair<std::int64_t>(ReduceOp::prod, std::int64_t{1} << 32, std::int64_t{1} << 32), 0);
  EXPECT_EQ(reduce_pair<std::int8_t>(ReduceOp::min, -5, 3), -5);
  EXPECT_EQ(reduce_pair<std::uint8_t>(ReduceOp::max, 200, 3), 200);
  EXPECT_EQ(reduce_pair<std::int64_t>(ReduceOp::max, -5, -7), -5);
  EXPECT_EQ(reduce_pair<float>(ReduceOp::min, -1.5f, 2.0f), -1.5f);
  EXPECT_EQ(reduce_pair<half_t>(ReduceOp::sum, half_t::from_float(2048), half_t::from_float(1)).to_float(), 2048.0f);
}

TEST(Finalize, DividesAvgAndKeepsOtherOps) {
  EXPECT_EQ(finalize<std::int32_t>(ReduceOp::avg, 10, 3), 3);
  EXPECT_EQ(finalize<std::int32_t>(ReduceOp::sum, 10, 3), 10);
  EXPECT_EQ(finalize<float>(ReduceOp::avg, 3.0f, 2), 1.5f);
  EXPECT_EQ(finalize<half_t>(ReduceOp::avg, half_t::from_float(3), 2).to_float(), 1.5f);
  // Rank counts that do not fit the element type.
  EXPECT_EQ(finalize<std::int8_t>(ReduceOp::avg, 100, 256), 0);
  EXPECT_EQ(finalize<std::uint8_t>(ReduceOp::avg, 200, 300), 0);
  EXPECT_EQ(finalize<std::int8_t>(ReduceOp::avg, 100, 200), 0);
  EXPECT_EQ(finalize<std::uint8_t>(ReduceOp::avg, 255, 128), 1);
}

// ---- verifiable inputs ----

constexpr int kRankCounts[] = {1, 2, 3, 5, 8, 64};
constexpr std::uint64_t kSeed = 0x5eed;
constexpr int kElements = 256;

template <typename T>
T reduce_range(ReduceOp op, const std::vector<T>& v, std::size_t lo, std::size_t hi) {  // pairwise tree
  if (hi - lo == 1) return v[lo];
  const std::size_t mid = lo + (hi - lo) / 2;
  return reduce_pair<T>(op, reduce_range(op, v, lo, mid), reduce_range(op, v, mid, hi));
}

// The three orders the implementations use: ring-like forward, reverse, tree-like pairwise.
template <typename T>
std::vector<T> reductions(ReduceOp op, const std::vector<T>& v, int n) {
  const ReduceOp rop = op == ReduceOp::avg ? ReduceOp::sum : op;
  T fwd = v[0], rev = v[v.size() - 1];
  for (std::size_t i = 1; i < v.size(); ++i) fwd = reduce_pair<T>(rop, fwd, v[i]);
  for (std::size_t i = v.size() - 1; i-- > 0;) rev = reduce_pair<T>(rop, v[i], rev);
  T tree = reduce_range(rop, v, 0, v.size());
  return {finalize<T>(op, fwd, n), finalize<T>(op, rev, n), finalize<T>(op, tree, n)};
}

template <typename T>
std::vector<T> inputs(ReduceOp op, std::uint64_t index, int n) {
  std::vector<T> v(n);
  for (int r = 0; r < n; ++r) v[r] = input_value<T>(op, kSeed, r, index, n);
  return v;
}

// A changed input of one rank, chosen to change the result where the op can see it.
template <typename T>
T changed(ReduceOp op, T x, int n) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case ReduceOp::sum: return static_cast<T>(static_cast<U>(x) + 1u);
      case ReduceOp::prod: return static_cast<T>(static_cast<U>(x) * 3u);  // odd: invertible
      case ReduceOp::min: return std::numeric_limits<T>::min();
      case ReduceOp::max: return std::numeric_limits<T>::max();
      default: return static_cast<T>(static_cast<U>(x) + static_cast<U>(n));  // avg: the quotient moves
    }
  } else {
    const double v = static_cast<double>(to_arith(x));
    const double m = std::min(exact_integer_limit<T>(), 1048576.0);
    switch (op) {
      case ReduceOp::sum: return from_arith<T>(v + 1);
      case ReduceOp::prod: return from_arith<T>(-v);
      case ReduceOp::min: return from_arith<T>(-m);
      case ReduceOp::max: return from_arith<T>(m);
      default:  // avg: the smallest change of an input within the pattern (fp8: the next power of 2)
        return from_arith<T>(is_fp8<T> ? (v == 0 ? 1 : 2 * v) : v + 1);
    }
  }
}

template <typename T>
void check_pattern(ReduceOp op, int n) {
  SCOPED_TRACE(testing::Message() << name(op) << " n=" << n);
  int detected = 0;
  for (std::uint64_t i = 0; i < kElements; ++i) {
    const std::uint64_t index = i < kElements / 2 ? i : i * 1000003;
    std::vector<T> v = inputs<T>(op, index, n);
    const T want = reduced_value<T>(op, kSeed, index, n);
    for (const T& got : reductions(op, v, n))
      ASSERT_TRUE(value_matches<T>(op, want, got, n)) << "index " << index;
    v[n / 2] = changed<T>(op, v[n / 2], n);
    const std::vector<T> bad = reductions(op, v, n);
    detected += !value_matches<T>(op, want, bad[0], n);
  }
  EXPECT_GT(detected, 0) << "a changed input of rank " << n / 2 << " went unnoticed on every element";
  // avg: every element sees it, for every type and rank count (a float avg is checked with a
  // tolerance, which must stay below what one input off by one moves the average).
  if (op == ReduceOp::avg) {
    EXPECT_EQ(detected, kElements) << "an avg input of rank " << n / 2 << " off by one went unnoticed";
  }
}

template <typename T>
class Verifiable : public testing::Test {};
using ElementTypes = testing::Types<std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t,
                                    std::uint64_t, half_t, bfloat16_t, float, double, fp8_e4m3_t, fp8_e5m2_t>;
TYPED_TEST_SUITE(Verifiable, ElementTypes);

TYPED_TEST(Verifiable, ExactInAnyOrderAndChangesAreSeen) {
  for (ReduceOp op : kAllReduceOps)
    for (int n : kRankCounts) check_pattern<TypeParam>(op, n);
}

// One wrong input of any rank is seen by the avg check at every rank count from 1 to 64 (float
// avg compares with a tolerance; a wrong input shrinks by 1/n in the average).
TYPED_TEST(Verifiable, AvgSeesOneWrongInputAtEveryRankCount) {
  for (int n = 1; n <= 64; ++n) check_pattern<TypeParam>(ReduceOp::avg, n);
}

// NCCL's float avg pre-multiplies every input by 1/n rounded to the type, then sums: the check
// accepts that rounding at every rank count.
TYPED_TEST(Verifiable, AvgAcceptsNcclPremultipliedSum) {
  using T = TypeParam;
  if constexpr (!std::is_integral_v<T>) {
    for (int n = 1; n <= (is_fp8<T> ? 256 : 64); ++n)
      for (std::uint64_t i = 0; i < kElements; ++i) {
        const T scale = from_arith<T>(1.0 / n);
        T acc = from_arith<T>(0.0);
        for (int r = 0; r < n; ++r)
          acc = reduce_pair<T>(ReduceOp::sum, acc,
                               result_of<T>(to_arith(input_value<T>(ReduceOp::avg, kSeed, r, i, n)) * to_arith(scale)));
        ASSERT_TRUE(value_matches<T>(ReduceOp::avg, reduced_value<T>(ReduceOp::avg, kSeed, i, n), acc, n))
            << "n=" << n << " index " << i;
      }
  }
}

// fp8 avg, where NCCL's fp8(1/n) is off by up to 6 % (e4m3) or 12 % (e5m2): the check is exact
// while 1/n is a normal fp8 number (n <= 64 for e4m3; the tests above); past that, through 256
// ranks, it accepts NCCL's pre-multiplied sum (the test above) and still sees, on every element,
// the active input doubled or negated, and an idle rank holding the pattern's largest value.
TYPED_TEST(Verifiable, Fp8AvgBoundSeesWrongInputsPastTheExactRange) {
  using T = TypeParam;
  if constexpr (is_fp8<T>) {
    EXPECT_EQ(fp8_avg_tolerance<T>(fp8_avg_exact_ranks<T>()), 0.0);
    EXPECT_GT(fp8_avg_tolerance<T>(fp8_avg_exact_ranks<T>() + 1), 0.0);
    for (int n = fp8_avg_exact_ranks<T>() + 1; n <= std::min(256, 4 * fp8_avg_exact_ranks<T>()); ++n) {
      for (std::uint64_t i = 0; i < kElements; ++i) {
        std::vector<T> v = inputs<T>(ReduceOp::avg, i, n);
        const T want = reduced_value<T>(ReduceOp::avg, kSeed, i, n);
        int active = 0;
        while (to_arith(v[active]) == 0) ++active;
        const int idle = (active + 1) % n;
        const double largest = std::ldexp(1.0, fp8_avg_first_exponent<T>(n) + T::kMantissa);
        for (double change : {2.0, -1.0}) {
          std::vector<T> bad = v;
          bad[active] = from_arith<T>(to_arith(v[active]) * change);
          ASSERT_FALSE(value_matches<T>(ReduceOp::avg, want, reductions(ReduceOp::avg, bad, n)[0], n))
              << "n=" << n << " element " << i << ": active input times " << change << " unnoticed";
        }
        v[idle] = from_arith<T>(std::copysign(largest, to_arith(v[active])));
        ASSERT_FALSE(value_matches<T>(ReduceOp::avg, want, reductions(ReduceOp::avg, v, n)[0], n))
            << "n=" << n << " element " << i << ": an idle rank's input unnoticed";
      }
    }
  }
}

TYPED_TEST(Verifiable, DataMovementPatternIsExactAndDistinct) {
  using T = TypeParam;
  // Data movement values are exact integers within the type's exact range.
  int distinct = 0;
  for (std::uint64_t i = 0; i < kElements; ++i) {
    const T a = input_value<T>(ReduceOp::none, kSeed, 0, i, 8), b = input_value<T>(ReduceOp::none, kSeed, 1, i, 8);
    distinct += std::memcmp(&a, &b, sizeof(T)) != 0;
    if constexpr (!std::is_integral_v<T>) {
      const double v = static_cast<double>(to_arith(a));
      EXPECT_EQ(v, std::nearbyint(v));
      EXPECT_LE(std::fabs(v), exact_integer_limit<T>());
    }
  }
  EXPECT_GT(distinct, kElements / 2) << "ranks' inputs should differ";
}

TEST(CollectiveExpected, MatchesTheLayoutOfEachCollective) {
  const int n = 4;
  const std::uint64_t count = 5;
  for (int rank = 0; rank < n; ++rank)
    for (std::uint64_t j = 0; j < count * n; ++j) {
      // all-gather: block j / count is rank (j / count)'s input.
      EXPECT_EQ(collective_expected<std::int32_t>(Collective::allgather, ReduceOp::none, kSeed, rank, n, 0, count, j),
                collective_input<std::int32_t>(Collective::allgather, ReduceOp::sum, kSeed,
                                               static_cast<int>(j / count), j % count, n));
    }
  for (std::uint64_t j = 0; j < count; ++j) {
    EXPECT_EQ(collective_expected<std::int32_t>(Collective::reducescatter, ReduceOp::sum, kSeed, 2, n, 0, count, j),
              reduced_value<std::int32_t>(ReduceOp::sum, kSeed, 2 * count + j, n));
    EXPECT_EQ(collective_expected<std::int32_t>(Collective::sendrecv, ReduceOp::none, kSeed, 0, n, 0, count, j),
              input_value<std::int32_t>(ReduceOp::none, kSeed, n - 1, j, n));
    EXPECT_EQ(collective_expected<std::int32_t>(Collective::broadcast, ReduceOp::none, kSeed, 1, n, 3, count, j),
              input_value<std::int32_t>(ReduceOp::none, kSeed, 3, j, n));
  }
}

// The expected output of the new collectives, element by element against their definitions.
TEST(CollectiveExpected, AlltoallGatherScatterReduceLayouts) {
  const int n = 4, root = 2;
  const std::uint64_t count = 3;
  auto in = [&](int rank, std::uint64_t i) { return input_value<std::int32_t>(ReduceOp::none, kSeed, rank, i, n); };
  auto want = [&](Collective c, int rank, std::uint64_t j) {
    return collective_expected<std::int32_t>(c, ReduceOp::sum, kSeed, rank, n, root, count, j);
  };
  for (int rank = 0; rank < n; ++rank)
    for (int p = 0; p < n; ++p)
      for (std::uint64_t o = 0; o < count; ++o) {
        // all-to-all: block p of my output is block `rank` of rank p's input.
        EXPECT_EQ(want(Collective::alltoall, rank, p * count + o), in(p, rank * count + o));
        // gather: block p of the root's output is rank p's input.
        EXPECT_EQ(want(Collective::gather, root, p * count + o), in(p, o));
      }
  for (int rank = 0; rank < n; ++rank)
    for (std::uint64_t j = 0; j < count; ++j) {
      EXPECT_EQ(want(Collective::scatter, rank, j), in(root, rank * count + j));
      EXPECT_EQ(want(Collective::reduce, root, j), reduced_value<std::int32_t>(ReduceOp::sum, kSeed, j, n));
    }
}

// alltoallv's skew: rank r sends 1 + (p - r) mod n units to p; blocks tile both buffers exactly,
// every rank's totals are n(n+1)/2 units, and the expected output takes each block from its sender.
TEST(CollectiveExpected, AlltoallvSkewTilesTheBuffers) {
  for (int n = 1; n <= 9; ++n) {
    const std::uint64_t count = 2, total = count * n * (n + 1) / 2;
    for (int r = 0; r < n; ++r) {
      std::uint64_t sent = 0, received = 0;
      for (int p = 0; p < n; ++p) {
        EXPECT_EQ(alltoallv_send_offset(r, p, n, count), sent);
        EXPECT_EQ(alltoallv_recv_offset(r, p, n, count), received);
        EXPECT_EQ(alltoallv_block(r, p, n, count), count * (1 + (p - r + n) % n));
        sent += alltoallv_block(r, p, n, count);
        received += alltoallv_block(p, r, n, count);
      }
      EXPECT_EQ(sent, total);
      EXPECT_EQ(received, total);
      EXPECT_EQ(shape_for_count(Collective::alltoallv, DataType::int32, n, count).recv_elements, total);
      for (int p = 0; p < n; ++p)
        for (std::uint64_t o = 0; o < alltoallv_block(p, r, n, count); ++o)
          EXPECT_EQ(collective_expected<std::int32_t>(Collective::alltoallv, ReduceOp::none, kSeed, r, n, 0, count,
                                                      alltoallv_recv_offset(r, p, n, count) + o),
                    input_value<std::int32_t>(ReduceOp::none, kSeed, p, alltoallv_send_offset(p, r, n, count) + o, n));
    }
  }
}

// peer_block() and moves_block(), the pairwise moves the direct CPU and copy-engine GPU
// implementations make: applied to every rank's buffers as the harness lays them out (both
// placements where an in-place form exists), they give exactly the expected output, for 1-5
// ranks and every root.
TEST(CollectiveExpected, PeerBlocksProduceTheExpectedOutput) {
  using T = std::int32_t;
  for (Collective c : {Collective::alltoall, Collective::alltoallv, Collective::gather, Collective::scatter})
    for (int n = 1; n <= 5; ++n)
      for (int root = 0; root < n; ++root)
        for (bool in_place : {false, true}) {
          if (in_place && !supports_in_place(c)) continue;
          const std::uint64_t count = 3;
          const CollectiveShape shape = shape_for_count(c, DataType::int32, n, count);
          const std::size_t size = std::max(shape.send_elements, shape.recv_elements);
          std::vector<std::vector<T>> S(n, std::vector<T>(size, -1)), R(n, std::vector<T>(size, -1));
          std::vector<CallBuffers> call;
          for (int r = 0; r < n; ++r) {
            call.push_back(call_buffers(c, in_place, reinterpret_cast<std::byte*>(S[r].data()),
                                        reinterpret_cast<std::byte*>(R[r].data()), r, count, sizeof(T)));
            T* input = reinterpret_cast<T*>(const_cast<std::byte*>(call[r].send));
            for (std::uint64_t i = 0; i < shape.send_elements; ++i)
              input[i] = collective_input<T>(c, ReduceOp::none, kSeed, r, i, n);
          }
          for (int from = 0; from < n; ++from)
            for (int to = 0; to < n; ++to) {
              if (!moves_block(c, from, to, root)) continue;
              const PeerBlock b = peer_block(c, from, to, n, count);
              ASSERT_GT(b.count, 0u);
              const T* src = reinterpret_cast<const T*>(call[from].send) + b.send_offset;
              T* dst = reinterpret_cast<T*>(call[to].recv) + b.recv_offset;
              if (src != dst) std::memcpy(dst, src, b.count * sizeof(T));
            }
          for (int r = 0; r < n; ++r) {
            const T* out = reinterpret_cast<const T*>(call[r].recv);
            for (std::uint64_t j = 0; j < output_elements(c, r, root, shape); ++j)
              ASSERT_EQ(out[j], (collective_expected<T>(c, ReduceOp::none, kSeed, r, n, root, count, j)))
                  << name(c) << " n=" << n << " root=" << root << " in_place=" << in_place << " rank " << r
                  << " element " << j;
          }
        }
  EXPECT_EQ(peer_block(Collective::allreduce, 0, 1, 2, 3).count, 0u);
  EXPECT_FALSE(moves_block(Collective::gather, 1, 0, 1));
  EXPECT_TRUE(moves_block(Collective::scatter, 1, 0, 1));
}

TEST(CollectiveDescriptor, NamesParseBackAndEveryCollectiveIsDescribed) {
  for (Collective c : kAllCollectives) {
    EXPECT_EQ(collective_descriptor(c).coll, c);
    EXPECT_EQ(parse_collective(name(c)), c);
    EXPECT_NE(valid_collectives().find(name(c)), std::string::npos);
  }
  for (Collective c : kAllCollectives) {
    const bool reduces = c == Collective::allreduce || c == Collective::reducescatter || c == Collective::reduce;
    const bool rooted = c == Collective::broadcast || c == Collective::reduce || c == Collective::gather ||
                        c == Collective::scatter;
    EXPECT_EQ(has_reduce_op(c), reduces) << name(c);
    EXPECT_EQ(has_root(c), rooted) << name(c);
  }
  for (const char* alias : {"all_to_all", "alltoall", "alltoallv", "reduce", "gather", "scatter"})
    EXPECT_TRUE(parse_collective(alias).has_value()) << alias;
  // Root-only output: the other ranks' receive buffers hold nothing to check.
  const CollectiveShape s = shape_for_count(Collective::gather, DataType::int32, 4, 10);
  EXPECT_EQ(output_elements(Collective::gather, 2, 2, s), 40u);
  EXPECT_EQ(output_elements(Collective::gather, 1, 2, s), 0u);
  EXPECT_EQ(output_elements(Collective::reduce, 0, 3, shape_for_count(Collective::reduce, DataType::int8, 4, 7)), 0u);
  EXPECT_EQ(output_elements(Collective::scatter, 1, 2, shape_for_count(Collective::scatter, DataType::int8, 4, 7)), 7u);
}

TEST(CollectiveDescriptor, InPlaceLayoutsAreNcclsAndRepetitionIsKnown) {
  std::byte S[4096], R[4096];
  const int rank = 3;
  const size_t count = 10, esz = 4;
  const size_t block = rank * count * esz;
  CallBuffers b = call_buffers(Collective::allreduce, false, S, R, rank, count, esz);
  EXPECT_TRUE(b.send == S && b.recv == R && b.restore_at == nullptr && b.poison_recv && !b.out_in_send);
  b = call_buffers(Collective::allreduce, true, S, R, rank, count, esz);
  EXPECT_TRUE(b.send == R && b.recv == R && b.restore_at == R && !b.poison_recv && !b.out_in_send);
  b = call_buffers(Collective::broadcast, true, S, R, rank, count, esz);
  EXPECT_TRUE(b.send == R && b.recv == R && b.restore_at == R && !b.poison_recv);
  b = call_buffers(Collective::allgather, true, S, R, rank, count, esz);
  EXPECT_TRUE(b.send == R + block && b.recv == R && b.restore_at == R + block && b.poison_recv && !b.out_in_send);
  EXPECT_EQ(in_place_send_offset(Collective::allgather, rank, count), rank * count);
  b = call_buffers(Collective::reducescatter, true, S, R, rank, count, esz);
  EXPECT_TRUE(b.send == S && b.recv == S + block && b.restore_at == S && !b.poison_recv && b.out_in_send);
  EXPECT_EQ(in_place_recv_offset(Collective::reducescatter, rank, count), rank * count);
  b = call_buffers(Collective::gather, true, S, R, rank, count, esz);
  EXPECT_TRUE(b.send == R + block && b.recv == R && b.poison_recv && !b.out_in_send);
  b = call_buffers(Collective::scatter, true, S, R, rank, count, esz);
  EXPECT_TRUE(b.send == S && b.recv == S + block && !b.poison_recv && b.out_in_send);
  b = call_buffers(Collective::reduce, true, S, R, rank, count, esz);
  EXPECT_TRUE(b.send == R && b.recv == R && !b.poison_recv);
  EXPECT_FALSE(supports_in_place(Collective::sendrecv) || supports_in_place(Collective::alltoall) ||
               supports_in_place(Collective::alltoallv));
  try {
    call_buffers(Collective::sendrecv, true, S, R, rank, count, esz);
    ADD_FAILURE() << "sendrecv in place should be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no in-place form"), std::string::npos);
  }

  EXPECT_TRUE(repeats_in_place(Collective::allgather, ReduceOp::none));
  EXPECT_TRUE(repeats_in_place(Collective::broadcast, ReduceOp::none));
  EXPECT_TRUE(repeats_in_place(Collective::gather, ReduceOp::none));
  EXPECT_TRUE(repeats_in_place(Collective::scatter, ReduceOp::none));
  EXPECT_FALSE(repeats_in_place(Collective::alltoall, ReduceOp::none));
  EXPECT_FALSE(repeats_in_place(Collective::sendrecv, ReduceOp::none));
  for (Collective c : {Collective::allreduce, Collective::reducescatter, Collective::reduce}) {
    EXPECT_TRUE(repeats_in_place(c, ReduceOp::min) && repeats_in_place(c, ReduceOp::max));
    EXPECT_FALSE(repeats_in_place(c, ReduceOp::sum) || repeats_in_place(c, ReduceOp::prod) ||
                 repeats_in_place(c, ReduceOp::avg));
  }
}

}  // namespace
}  // namespace ccbench
