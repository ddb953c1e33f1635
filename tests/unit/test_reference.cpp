// The independent reference (collectives/reference.h): its formats against values written down
// from the format definitions, then the checks' expected values (reduced_value, which shares
// reduce_pair with the kernels) and the CPU reduction loops held to it, bit for bit: for every
// type, op and input pattern, at many rank counts; every fp8 pair; every tail length of the loops.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "collectives/cpu/reduce_kernels.h"
#include "collectives/numeric.h"
#include "collectives/reference.h"
#include "collectives/verifiable.h"

namespace ccbench {
namespace {

constexpr std::uint64_t kReferenceSeed = 0x5eed;
constexpr ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg};
constexpr InputPattern kPatterns[] = {InputPattern::integer, InputPattern::precision};
constexpr int kReferenceRankCounts[] = {1, 2, 3, 4, 5, 7, 8, 16, 63, 64, 65, 257};

template <typename T>
std::uint64_t bits_of(T v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_integral_v<T>) return false;
  else return std::isnan(static_cast<double>(to_arith(v)));
}

// Equal bits, or both NaN.
template <typename T>
bool same_result(T a, T b) {
  return (is_nan(a) && is_nan(b)) || bits_of(a) == bits_of(b);
}

template <typename T>
DataType reference_type_of() {
  DataType found = DataType::float32;
  for (DataType t : kAllDataTypes)
    dispatch_type(t, [&](auto v) {
      if constexpr (std::is_same_v<decltype(v), T>) found = t;
    });
  return found;
}

template <typename T>
T reference_of(ReduceOp op, std::uint64_t index, int n, InputPattern pattern) {
  T out{};
  reference::reduced(reference_type_of<T>(), op, kReferenceSeed, index, n, pattern, &out);
  return out;
}

// ---- the formats, against values written down from their definitions ------------------------

TEST(ReferenceFormats, DecodeKnownValues) {
  using reference::decode;
  EXPECT_EQ(decode(0x3c00, reference::kHalf), 1.0L);
  EXPECT_EQ(decode(0x7bff, reference::kHalf), 65504.0L);
  EXPECT_EQ(decode(0x0001, reference::kHalf), std::ldexp(1.0L, -24));  // the smallest subnormal
  EXPECT_EQ(decode(0x0400, reference::kHalf), std::ldexp(1.0L, -14));  // the smallest normal
  EXPECT_TRUE(std::signbit(decode(0x8000, reference::kHalf)) && decode(0x8000, reference::kHalf) == 0);
  EXPECT_TRUE(std::isinf(decode(0xfc00, reference::kHalf)) && decode(0xfc00, reference::kHalf) < 0);
  EXPECT_TRUE(std::isnan(decode(0x7e00, reference::kHalf)));
  EXPECT_EQ(decode(0x3f80, reference::kBfloat16), 1.0L);
  EXPECT_EQ(decode(0x0001, reference::kBfloat16), std::ldexp(1.0L, -133));
  EXPECT_EQ(decode(0x7e, reference::kE4m3), 448.0L);                        // S.1111.110: the largest
  EXPECT_TRUE(std::isnan(decode(0x7f, reference::kE4m3)));                  // S.1111.111: the only NaN
  EXPECT_EQ(decode(0x01, reference::kE4m3), std::ldexp(1.0L, -9));
  EXPECT_EQ(decode(0x78, reference::kE4m3), 256.0L);                        // no infinity: 1.000 x 2^8
  EXPECT_EQ(decode(0x7b, reference::kE5m2), 57344.0L);
  EXPECT_TRUE(std::isinf(decode(0x7c, reference::kE5m2)));
  EXPECT_EQ(decode(0x01, reference::kE5m2), std::ldexp(1.0L, -16));
  EXPECT_EQ(decode(0x3ff0000000000001ull, reference::kDouble), 1.0L + std::ldexp(1.0L, -52));
}

TEST(ReferenceFormats, EncodeRoundsToNearestEvenAndSaturatesFp8) {
  using reference::encode;
  EXPECT_EQ(encode(1.0L + std::ldexp(1.0L, -11), reference::kHalf), 0x3c00u);      // a tie: to even
  EXPECT_EQ(encode(1.0L + 3 * std::ldexp(1.0L, -11), reference::kHalf), 0x3c02u);  // a tie: to even
  EXPECT_EQ(encode(65520.0L, reference::kHalf), 0x7c00u);  // 65504 + half its step: to infinity
  EXPECT_EQ(encode(65519.0L, reference::kHalf), 0x7bffu);
  EXPECT_EQ(encode(std::ldexp(1.0L, -25), reference::kHalf), 0x0000u);  // half the smallest subnormal: to even
  EXPECT_EQ(encode(std::ldexp(3.0L, -26), reference::kHalf), 0x0001u);
  EXPECT_EQ(encode(-0.0L, reference::kHalf), 0x8000u);
  EXPECT_EQ(encode(464.0L, reference::kE4m3), 0x7eu);  // 448 + half its step ties to 448
  EXPECT_EQ(encode(1e9L, reference::kE4m3), 0x7eu);    // saturates
  EXPECT_EQ(encode(-INFINITY, reference::kE5m2), 0xfbu);
  EXPECT_EQ(encode(NAN, reference::kE4m3), 0x7fu);
  EXPECT_EQ(encode(1.0L + std::ldexp(1.0L, -53), reference::kDouble), 0x3ff0000000000000ull);
  EXPECT_EQ(reference::encode_quotient(1, 3, reference::kFloat), 0x3eaaaaabu);  // 1/3 rounded up
  EXPECT_EQ(reference::encode_quotient(-2, 3, reference::kHalf), 0xb955u);
  EXPECT_EQ(reference::encode_quotient(5, 2, reference::kE5m2), 0x41u);  // 2.5: 1.01 x 2^1
}

// Every bit pattern of the narrow formats decodes and encodes back to itself (NaN to NaN; e5m2's
// infinities to its largest finite value, as fp8 results saturate).
TEST(ReferenceFormats, NarrowFormatsRoundTripEveryPattern) {
  for (const reference::FloatFormat* f : {&reference::kHalf, &reference::kBfloat16, &reference::kE4m3, &reference::kE5m2}) {
    const std::uint64_t count = std::uint64_t{1} << (1 + f->exponent_bits + f->fraction_bits);
    const std::uint64_t sign = count / 2;
    for (std::uint64_t b = 0; b < count; ++b) {
      const long double v = reference::decode(b, *f);
      if (std::isnan(v)) {
        ASSERT_TRUE(std::isnan(reference::decode(reference::encode(v, *f), *f)));
        continue;
      }
      const std::uint64_t want = std::isinf(v) && f->saturates ? (b & sign) | reference::encode(448e10L, *f) : b;
      ASSERT_EQ(reference::encode(v, *f), want) << "format e" << f->exponent_bits << "m" << f->fraction_bits;
    }
  }
}

// The reference's narrow formats agree with numeric.h's conversions on every pattern: two
// independent codings of one definition.
TEST(ReferenceFormats, AgreesWithTheElementConversions) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const half_t h{static_cast<std::uint16_t>(b)};
    const long double v = reference::decode(b, reference::kHalf);
    ASSERT_TRUE(std::isnan(v) ? std::isnan(h.to_float()) : v == h.to_float()) << std::hex << b;
  }
  for (std::uint32_t b = 0; b < 256; ++b) {
    const fp8_e4m3_t x{static_cast<std::uint8_t>(b)};
    const long double v = reference::decode(b, reference::kE4m3);
    ASSERT_TRUE(std::isnan(v) ? std::isnan(x.to_float()) : v == x.to_float()) << std::hex << b;
  }
}

// ---- the checks' expected values ----------------------------------------------------------------

template <typename T>
void expected_values_match_reference() {
  for (InputPattern pattern : kPatterns)
    for (ReduceOp op : kOps)
      for (int n : kReferenceRankCounts)
        for (std::uint64_t i = 0; i < (n <= 16 ? 300u : 40u); ++i) {
          const std::uint64_t index = i * 7919 + static_cast<std::uint64_t>(n);
          const T fast = reduced_value<T>(op, kReferenceSeed, index, n, pattern);
          const T want = reference_of<T>(op, index, n, pattern);
          ASSERT_TRUE(same_result(fast, want))
              << name(pattern) << " " << name(op) << " n=" << n << " index " << index << ": expected value 0x"
              << std::hex << bits_of(fast) << ", reference 0x" << bits_of(want);
        }
}

template <typename T>
class Reference : public testing::Test {};
using ReferenceTypes = testing::Types<std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t,
                                    std::uint64_t, half_t, bfloat16_t, float, double, fp8_e4m3_t, fp8_e5m2_t>;
TYPED_TEST_SUITE(Reference, ReferenceTypes);

TYPED_TEST(Reference, ExpectedValuesAreTheReferences) { expected_values_match_reference<TypeParam>(); }

// The CPU loops (collectives/cpu/reduce_kernels.h) give the reference for every count around
// their vector widths and blocks (tails of 1-17 elements, 8k +- 1, 32k +- 1, the block edges),
// with two and three inputs, on the precision pattern.
TYPED_TEST(Reference, ReductionLoopsGiveTheReferenceAtEveryTail) {
  using T = TypeParam;
  std::vector<std::size_t> counts;
  for (std::size_t c = 1; c <= 17; ++c) counts.push_back(c);
  for (std::size_t k : {3, 4, 5, 8, 16, 64, 128, 512, 1024})
    for (std::size_t c : {8 * k - 1, 8 * k + 1}) counts.push_back(c);
  for (std::size_t c : {1023, 1025, 2047, 2049, 4095, 4097}) counts.push_back(c);
  for (ReduceOp op : kOps)
    for (int nsrc : {2, 3}) {
      const ReduceKernels loops(reference_type_of<T>(), op, nsrc);
      for (std::size_t count : counts) {
        std::vector<std::vector<T>> in(static_cast<std::size_t>(nsrc), std::vector<T>(count));
        for (int r = 0; r < nsrc; ++r)
          for (std::size_t i = 0; i < count; ++i)
            in[static_cast<std::size_t>(r)][i] = input_value<T>(op, kReferenceSeed, r, i, nsrc, InputPattern::precision);
        std::vector<T> out(count + 1, T{}), guard = out;
        const void* src[3] = {in[0].data(), in[1].data(), nsrc > 2 ? in[2].data() : nullptr};
        void* dst[1] = {out.data()};
        loops.reduce_multi(dst, 1, src, nsrc, count, op == ReduceOp::avg);
        for (std::size_t i = 0; i < count; ++i) {
          T ranks[3], want{};
          for (int r = 0; r < nsrc; ++r) ranks[r] = in[static_cast<std::size_t>(r)][i];
          reference::reduce(reference_type_of<T>(), op, ranks, nsrc, &want);
          ASSERT_TRUE(same_result(out[i], want)) << name(op) << " " << nsrc << " inputs, count " << count
                                                 << ", element " << i << ": 0x" << std::hex << bits_of(out[i])
                                                 << ", reference 0x" << bits_of(want);
        }
        ASSERT_EQ(bits_of(out[count]), bits_of(guard[count])) << "written past the end at count " << count;
      }
    }
}

// Every pair of fp8 values and every op: reduce_pair (the arithmetic of every check and of the
// MPI baseline's narrow-float ops) is the reference.
template <typename T>
void every_fp8_pair() {
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max})
    for (std::uint32_t a = 0; a < 256; ++a)
      for (std::uint32_t b = 0; b < 256; ++b) {
        const T pair[2] = {T{static_cast<std::uint8_t>(a)}, T{static_cast<std::uint8_t>(b)}};
        T want{};
        reference::reduce(reference_type_of<T>(), op, pair, 2, &want);
        const T got = reduce_pair<T>(op, pair[0], pair[1]);
        ASSERT_TRUE(same_result(got, want)) << name(op) << " 0x" << std::hex << a << " 0x" << b << ": 0x"
                                            << bits_of(got) << ", reference 0x" << bits_of(want);
      }
}

TEST(Reference, EveryFp8PairReducesAsTheReference) {
  every_fp8_pair<fp8_e4m3_t>();
  every_fp8_pair<fp8_e5m2_t>();
}

// double min and max keep double's precision and range: values float cannot hold.
TEST(Reference, DoubleMinMaxKeepDoublePrecision) {
  const double a = 1.0 + std::ldexp(1.0, -40), b = 1.0 + std::ldexp(1.0, -41);
  EXPECT_EQ(reduce_pair<double>(ReduceOp::max, a, b), a);
  EXPECT_EQ(reduce_pair<double>(ReduceOp::min, a, b), b);
  EXPECT_EQ(reduce_pair<double>(ReduceOp::max, 1e300, -1e300), 1e300);
  EXPECT_EQ(reduce_pair<double>(ReduceOp::min, 1e-300, 2e-300), 1e-300);
}

}  // namespace
}  // namespace ccbench
