// The CPU reduce loops of narrow floats (collectives/cpu/reduce_kernels.h, narrow_convert.h):
// the vectorised conversions against numeric.h's element-by-element code, and the loops against
// reduce_pair / result_of, bit for bit.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "collectives/cpu/cpu_vectors.h"
#include "collectives/cpu/narrow_convert.h"
#include "collectives/cpu/reduce_kernels.h"
#include "collectives/numeric.h"

namespace ccbench {
namespace {

constexpr DataType kNarrowTypes[] = {DataType::float16, DataType::bfloat16, DataType::f8e4m3, DataType::f8e5m2};

// Floats that reach every rounding case of a narrower format (as test_numeric.cpp), and a stride.
std::vector<float> rounding_cases() {
  std::vector<float> v;
  for (std::uint32_t top = 0; top < 65536; ++top)
    for (std::uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) v.push_back(bits_float((top << 16) | low));
  for (std::uint64_t u = 0; u < (1ull << 32); u += 9973) v.push_back(bits_float(static_cast<std::uint32_t>(u)));
  v.push_back(1.0f);  // an odd count: the vector loops' tail runs too
  return v;
}

// Every bit pattern of the type, plus 3 (a tail for the vector loops).
std::vector<std::uint8_t> every_pattern(std::size_t esz) {
  const std::size_t count = esz == 1 ? 256 : 65536;
  std::vector<std::uint8_t> bytes((count + 3) * esz);
  for (std::size_t i = 0; i < count + 3; ++i) {
    const std::uint32_t b = static_cast<std::uint32_t>(i % count);
    std::memcpy(bytes.data() + i * esz, &b, esz);  // little endian: the low bytes
  }
  return bytes;
}

bool same_float(float a, float b) { return (std::isnan(a) && std::isnan(b)) || float_bits(a) == float_bits(b); }

// This machine's vectorised conversions give what the element-by-element ones give, on every
// bit pattern (widen; a NaN may keep a different payload) and every float rounding case
// (narrow, bit for bit). A processor without AVX2/F16C has only the element-by-element ones.
TEST(NarrowConvert, VectorisedMatchesElementByElement) {
  if (!vector_isa_available(VectorIsa::avx2))
    GTEST_SKIP() << vector_isa_missing(VectorIsa::avx2) << ": nothing vectorised to compare";
  const std::vector<float> floats = rounding_cases();
  for (DataType t : kNarrowTypes) {
    SCOPED_TRACE(std::string(name(t)));
    const NarrowConverters vec = narrow_converters(t, true), one = narrow_converters(t, false);
    ASSERT_NE(vec.widen, one.widen);
    const std::size_t esz = element_size(t);
    const std::vector<std::uint8_t> patterns = every_pattern(esz);
    const std::size_t n = patterns.size() / esz;
    std::vector<float> a(n), b(n);
    vec.widen(a.data(), patterns.data(), n);
    one.widen(b.data(), patterns.data(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(same_float(a[i], b[i])) << "pattern " << std::hex << i;
    std::vector<std::uint8_t> x(floats.size() * esz), y(floats.size() * esz);
    vec.narrow(x.data(), floats.data(), floats.size());
    one.narrow(y.data(), floats.data(), floats.size());
    for (std::size_t i = 0; i < floats.size(); ++i)
      ASSERT_EQ(std::memcmp(x.data() + i * esz, y.data() + i * esz, esz), 0)
          << "float bits " << std::hex << float_bits(floats[i]);
  }
}

template <typename T>
T element(std::uint32_t bits) {
  T x;
  std::memcpy(&x, &bits, sizeof(T));
  return x;
}

// Two inputs: reduce_pair, bit for bit. fp8: every pair; 16-bit: every value against a spread of
// others. Three inputs: one rounding of the float result (result_of).
template <typename T>
void loops_reduce_as_reduce_pair(DataType t) {
  SCOPED_TRACE(std::string(name(t)));
  const std::uint32_t count = sizeof(T) == 1 ? 256 : 65536, step = sizeof(T) == 1 ? 1 : 4099;
  std::vector<T> a, b, c;
  for (std::uint32_t x = 0; x < count; ++x)
    for (std::uint32_t y = x % step; y < count; y += step) {
      a.push_back(element<T>(x));
      b.push_back(element<T>(y));
      c.push_back(element<T>((x * 7 + y) % count));
    }
  std::vector<T> out(a.size());
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max}) {
    SCOPED_TRACE(std::string(name(op)));
    const ReduceKernels k(t, op, 3);
    k.reduce(out.data(), a.data(), b.data(), a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      const T want = reduce_pair<T>(op, a[i], b[i]);
      ASSERT_TRUE(same_float(to_arith(out[i]), to_arith(want)) && (std::isnan(to_arith(want)) || out[i].bits == want.bits))
          << std::hex << a[i].bits << " " << b[i].bits << " gave " << out[i].bits << " want " << want.bits;
    }
    const void* src[3] = {a.data(), b.data(), c.data()};
    void* dst[1] = {out.data()};
    k.reduce_multi(dst, 1, src, 3, a.size(), false);
    for (std::size_t i = 0; i < a.size(); ++i) {
      float v = to_arith(a[i]);
      for (const T& e : {b[i], c[i]}) {
        const float w = to_arith(e);
        v = op == ReduceOp::prod  ? v * w
            : op == ReduceOp::min ? narrow_minmax<false>(v, w)
            : op == ReduceOp::max ? narrow_minmax<true>(v, w)
                                  : v + w;
      }
      const T want = result_of<T>(v);
      ASSERT_TRUE(std::isnan(v) ? std::isnan(to_arith(out[i])) : out[i].bits == want.bits)
          << "three inputs " << std::hex << a[i].bits << " " << b[i].bits << " " << c[i].bits;
    }
  }
}

TEST(ReduceKernels, NarrowFloatsReduceAsReducePair) {
  loops_reduce_as_reduce_pair<half_t>(DataType::float16);
  loops_reduce_as_reduce_pair<bfloat16_t>(DataType::bfloat16);
  loops_reduce_as_reduce_pair<fp8_e4m3_t>(DataType::f8e4m3);
  loops_reduce_as_reduce_pair<fp8_e5m2_t>(DataType::f8e5m2);
}

// avg: the sum divided in float and rounded once, into two outputs, one of them the input.
TEST(ReduceKernels, NarrowAvgDividesOnceAndMayWriteInPlace) {
  std::mt19937 rng(7);
  for (int n : {2, 3, 7}) {
    std::vector<fp8_e4m3_t> a(1000), b(1000), other(1000);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = fp8_e4m3_t::from_float(static_cast<float>(static_cast<int>(rng() % 33) - 16));
      b[i] = fp8_e4m3_t::from_float(static_cast<float>(static_cast<int>(rng() % 33) - 16));
    }
    const std::vector<fp8_e4m3_t> a0 = a;
    const ReduceKernels k(DataType::f8e4m3, ReduceOp::avg, n);
    k.reduce_store2(a.data(), other.data(), a.data(), b.data(), a.size(), true);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const fp8_e4m3_t want = result_of<fp8_e4m3_t>((a0[i].to_float() + b[i].to_float()) / static_cast<float>(n));
      ASSERT_EQ(a[i].bits, want.bits) << "n=" << n << " element " << i;
      ASSERT_EQ(other[i].bits, want.bits);
    }
  }
}

}  // namespace
}  // namespace ccbench
