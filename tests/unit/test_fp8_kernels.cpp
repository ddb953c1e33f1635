// The CPU fp8 reduction loops of every vector set (collectives/cpu/fp8_kernels.h, run through
// ReduceKernels with its 8-lane and element tails) against collectives/numeric.h, bit for bit
// (NaN is 0x7f there): every input pair of both formats for every operation, 1 to 3 outputs and
// in place; three inputs; avg's division for rank counts on both sides of 128; every count up to
// past three of the widest vectors and 2^k +- 1 around the loops' blocks. A set this processor or
// build lacks is skipped with the reason, never passed.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collectives/cpu/cpu_vectors.h"
#include "collectives/cpu/fp8_kernels.h"
#include "collectives/cpu/fp8_sum_tables.h"
#include "collectives/cpu/reduce_kernels.h"
#include "collectives/numeric.h"

namespace ccbench {
namespace {

constexpr ReduceOp kPairOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max};
// avg's divisors: up to 128 and beyond (a quotient of e4m3 values can then fall between
// multiples of 2^-16, where rounding at 1/256 scale would round twice: fp8_lanes.h).
constexpr int kFp8RankCounts[] = {2, 3, 7, 129, 255, 1000};

template <typename T>
DataType type_of() {
  return std::is_same_v<T, fp8_e4m3_t> ? DataType::f8e4m3 : DataType::f8e5m2;
}

// x op y in float as numeric.h computes before rounding.
float float_op(ReduceOp op, float x, float y) {
  switch (op) {
    case ReduceOp::prod: return x * y;
    case ReduceOp::min: return narrow_minmax<false>(x, y);
    case ReduceOp::max: return narrow_minmax<true>(x, y);
    default: return x + y;
  }
}

// The expected bytes of one pass: reduce_pair for two inputs; for three (or a finalizing pass)
// the float result rounded once (reduce_kernels.h), divided by nranks when `finalize`.
template <typename T>
std::uint8_t expected(ReduceOp op, const std::vector<const std::uint8_t*>& in, std::size_t i, bool finalize,
                      int nranks) {
  const ReduceOp arith = op == ReduceOp::avg ? ReduceOp::sum : op;
  if (in.size() == 2 && !finalize) return reduce_pair<T>(arith, T{in[0][i]}, T{in[1][i]}).bits;
  float v = T{in[0][i]}.to_float();
  for (std::size_t k = 1; k < in.size(); ++k) v = float_op(arith, v, T{in[k][i]}.to_float());
  if (finalize) v /= static_cast<float>(nranks);
  return result_of<T>(v).bits;
}

std::string hex(int v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// Runs one pass on n elements through `k` (in place when `in_place`: the first output is the
// first input) into `ndst` outputs with guard bytes after them, and checks every element and
// guard. Returns false after the first failure (reported).
template <typename T>
bool pass_matches(const ReduceKernels& k, std::vector<std::vector<std::uint8_t>> in, int ndst, bool in_place,
                  bool finalize, int nranks) {
  constexpr std::uint8_t kGuard = 0xa5;
  const std::size_t n = in[0].size();
  std::vector<const std::uint8_t*> orig;
  const std::vector<std::vector<std::uint8_t>> inputs = in;
  for (const auto& v : inputs) orig.push_back(v.data());
  std::vector<std::vector<std::uint8_t>> out(ndst, std::vector<std::uint8_t>(n + 64, kGuard));
  std::vector<void*> dst;
  std::vector<const void*> src;
  for (auto& o : out) dst.push_back(o.data());
  if (in_place) {
    in[0].resize(n + 64, kGuard);
    dst[0] = in[0].data();
  }
  for (auto& v : in) src.push_back(v.data());
  k.reduce_multi(dst.data(), ndst, src.data(), static_cast<int>(src.size()), n, finalize);
  for (int d = 0; d < ndst; ++d) {
    const auto* o = static_cast<const std::uint8_t*>(dst[d]);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t want = expected<T>(k.op(), orig, i, finalize, nranks);
      if (o[i] != want) {
        std::string args;
        for (const auto* v : orig) args += " " + hex(v[i]);
        ADD_FAILURE() << name(type_of<T>()) << " " << name(k.op()) << (finalize ? " finalized" : "") << " n=" << n
                      << " output " << d << (in_place && d == 0 ? " (in place)" : "") << " element " << i << ":"
                      << args << " gave " << hex(o[i]) << ", numeric.h " << hex(want);
        return false;
      }
    }
    for (std::size_t i = n; i < n + 64; ++i)
      if (o[i] != kGuard) {
        ADD_FAILURE() << name(type_of<T>()) << " " << name(k.op()) << " n=" << n << " wrote past the end at " << i;
        return false;
      }
  }
  return true;
}

// Every pair (x, y) of bytes: a[i] = i / 256, b[i] = i % 256.
std::vector<std::vector<std::uint8_t>> every_pair() {
  std::vector<std::uint8_t> a(65536), b(65536);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<std::uint8_t>(i >> 8);
    b[i] = static_cast<std::uint8_t>(i);
  }
  return {a, b};
}

}  // namespace

// Test names and failures show the vector set by name.
void PrintTo(VectorIsa isa, std::ostream* os) { *os << name(isa); }

namespace {

class Fp8Loops : public ::testing::TestWithParam<VectorIsa> {
 protected:
  void SetUp() override {
    if (!vector_isa_available(GetParam())) GTEST_SKIP() << vector_isa_missing(GetParam());
  }
  VectorIsa isa() const { return GetParam(); }
};

template <typename T>
void every_pair_every_op(VectorIsa isa) {
  const auto pairs = every_pair();
  for (ReduceOp op : kPairOps) {
    const ReduceKernels k(type_of<T>(), op, 2, isa);
    for (int ndst = 1; ndst <= kMaxReduceDst; ++ndst)
      for (bool in_place : {false, true})
        if (!pass_matches<T>(k, pairs, ndst, in_place, false, 2)) return;
  }
}

TEST_P(Fp8Loops, EveryPairEveryOpAsReducePair) {
  every_pair_every_op<fp8_e4m3_t>(isa());
  every_pair_every_op<fp8_e5m2_t>(isa());
}

// avg: the passes before the last add (as reduce_pair's sum); the last divides the float sum and
// rounds once, from two inputs (a ring's last step) or one (finalize).
template <typename T>
void avg_every_pair(VectorIsa isa) {
  const auto pairs = every_pair();
  for (int nranks : kFp8RankCounts) {
    const ReduceKernels k(type_of<T>(), ReduceOp::avg, nranks, isa);
    if (!pass_matches<T>(k, pairs, 1, false, false, nranks)) return;
    for (int ndst = 1; ndst <= 2; ++ndst)
      if (!pass_matches<T>(k, pairs, ndst, ndst == 2, true, nranks)) return;
    if (!pass_matches<T>(k, {pairs[0]}, 1, false, true, nranks)) return;
  }
}

TEST_P(Fp8Loops, AvgDividesOnceForEveryPair) {
  avg_every_pair<fp8_e4m3_t>(isa());
  avg_every_pair<fp8_e5m2_t>(isa());
}

// Three inputs (a tree node): every pair of the first two with a third input that runs through
// every byte along the pairs, shifted by 16 starting points (4 Mi triples per operation).
template <typename T>
void three_inputs(VectorIsa isa) {
  const auto pairs = every_pair();
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
    const ReduceKernels k(type_of<T>(), op, 3, isa);
    for (int third = 0; third < 256; third += 17) {
      std::vector<std::uint8_t> c(pairs[0].size());
      for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<std::uint8_t>(i + third);
      if (!pass_matches<T>(k, {pairs[0], pairs[1], c}, third % 3 + 1, false, op == ReduceOp::avg, 3)) return;
    }
  }
}

TEST_P(Fp8Loops, ThreeInputsRoundOnce) {
  three_inputs<fp8_e4m3_t>(isa());
  three_inputs<fp8_e5m2_t>(isa());
}

// Every count up to past three of the widest vectors (64) and the 8-lane loop's tail, and
// 2^k +- 1 around 1 Ki, 4 Ki and 8 Ki: the vector loops hand the right remainder on.
std::vector<std::size_t> tail_counts() {
  std::vector<std::size_t> n;
  for (std::size_t i = 1; i <= 3 * 64 + 17; ++i) n.push_back(i);
  for (std::size_t p : {1024, 4096, 8192})
    for (std::size_t d : {p - 1, p, p + 1}) n.push_back(d);
  return n;
}

template <typename T>
void tails(VectorIsa isa) {
  std::mt19937 rng(34);
  for (std::size_t n : tail_counts()) {
    std::vector<std::vector<std::uint8_t>> in(3, std::vector<std::uint8_t>(n));
    for (auto& v : in)
      for (auto& b : v) b = static_cast<std::uint8_t>(rng());
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
      const ReduceKernels k(type_of<T>(), op, 5, isa);
      const bool fin = op == ReduceOp::avg;
      if (!pass_matches<T>(k, {in[0], in[1]}, 1 + n % 3, n % 2 == 1, fin, 5)) return;
      if (!pass_matches<T>(k, in, 1, false, fin, 5)) return;
    }
  }
}

TEST_P(Fp8Loops, EveryTailLength) {
  tails<fp8_e4m3_t>(isa());
  tails<fp8_e5m2_t>(isa());
}

// The wide loops are there (and so were tested above) for every combination fp8_kernels.h
// promises, and absent for those it leaves to the 8-lane loop.
TEST_P(Fp8Loops, WideLoopsCoverWhatTheyPromise) {
  for (DataType t : {DataType::f8e4m3, DataType::f8e5m2}) {
    SCOPED_TRACE(std::string(name(t)));
    const bool wide = isa() != VectorIsa::portable, e4m3 = t == DataType::f8e4m3;
    for (ReduceOp op : kPairOps)
      for (int nd = 1; nd <= 3; ++nd) {
        EXPECT_EQ(fp8_bulk(isa(), t, op, 2, nd, false) != nullptr, wide) << name(op);
        EXPECT_EQ(fp8_bulk(isa(), t, op, 3, nd, false) != nullptr, wide && !(e4m3 && op == ReduceOp::prod))
            << name(op);
      }
    EXPECT_EQ(fp8_bulk(isa(), t, ReduceOp::sum, 2, 2, true) != nullptr, wide && !e4m3);
    EXPECT_EQ(fp8_bulk(isa(), t, ReduceOp::sum, 1, 1, true) != nullptr, wide && !e4m3);
  }
}

// The byte-lane sums' tables derive from numeric.h without a conflict (fp8_sum_tables.h), so the
// AVX-512 VBMI set runs its own loop for sums of two inputs (checked above for every pair) and not
// the float loop of AVX-512 BW.
TEST(Fp8SumTables, DeriveWithoutConflict) {
  EXPECT_TRUE(fp8_e5m2_sum_tables().ok);
  EXPECT_TRUE(fp8_e4m3_sum_tables().ok);
  if (!vector_isa_available(VectorIsa::avx512vbmi)) GTEST_SKIP() << vector_isa_missing(VectorIsa::avx512vbmi);
  for (DataType t : {DataType::f8e4m3, DataType::f8e5m2})
    for (int nd = 1; nd <= 3; ++nd) {
      const Fp8Bulk vbmi = fp8_bulk(VectorIsa::avx512vbmi, t, ReduceOp::sum, 2, nd, false);
      EXPECT_NE(vbmi, nullptr);
      EXPECT_NE(vbmi, fp8_bulk(VectorIsa::avx512, t, ReduceOp::sum, 2, nd, false)) << name(t) << " " << nd;
    }
}

INSTANTIATE_TEST_SUITE_P(EveryVectorSet, Fp8Loops, ::testing::ValuesIn(kAllVectorIsas),
                         [](const ::testing::TestParamInfo<VectorIsa>& p) {
                           std::string s;
                           for (char c : name(p.param))
                             if (std::isalnum(static_cast<unsigned char>(c))) s += c;
                           return s;
                         });

// AVX-512 FP16 adds and multiplies halves with one rounding, where numeric.h rounds the float
// result to half. The two agree on every fp8 pair (at e4m3's 1/256 scale too, as the loops
// compute): checked here in double, exact for these sums and products, on any processor.
std::uint16_t half_rounded(double x) {
  constexpr double kHalfOverflow = 65520;  // half of the step above 65504: ties to even give 65536
  if (std::fabs(x) >= kHalfOverflow) return std::signbit(x) ? 0xfc00 : 0x7c00;
  int e = 0;
  std::frexp(x, &e);
  const double quantum = std::ldexp(1.0, std::max(e, -13) - 11);  // half's subnormal quantum is 2^-24
  const double r = std::nearbyint(x / quantum) * quantum;          // FE_TONEAREST: ties to even
  return half_t::from_float(static_cast<float>(std::copysign(r, x))).bits;
}

TEST(Fp8HalfArithmetic, OneRoundingEqualsFloatThenHalf) {
  for (int e : {4, 5}) {
    for (int i = 0; i < 65536; ++i) {
      const std::uint8_t a = static_cast<std::uint8_t>(i >> 8), b = static_cast<std::uint8_t>(i);
      const float x = e == 4 ? fp8_e4m3_t{a}.to_float() : fp8_e5m2_t{a}.to_float();
      const float y = e == 4 ? fp8_e4m3_t{b}.to_float() : fp8_e5m2_t{b}.to_float();
      if (std::isnan(x) || std::isnan(y)) continue;
      const float scale = e == 4 ? 1.0f / 256 : 1.0f;  // the loops' scale; the product keeps one factor unscaled
      if (!std::isnan(x + y)) {
        ASSERT_EQ(half_rounded(static_cast<double>(x * scale) + static_cast<double>(y * scale)),
                  half_t::from_float(x * scale + y * scale).bits)
            << "e" << e << " sum of " << hex(a) << " " << hex(b);
      }
      if (!std::isnan(x * y)) {
        ASSERT_EQ(half_rounded(static_cast<double>(x * scale) * static_cast<double>(y)),
                  half_t::from_float(x * scale * y).bits)
            << "e" << e << " product of " << hex(a) << " " << hex(b);
      }
    }
  }
}

}  // namespace
}  // namespace ccbench
