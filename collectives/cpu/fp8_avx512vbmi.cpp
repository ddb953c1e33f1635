// The fp8 loops for AVX-512 VBMI and GFNI. Sums of two inputs stay in byte lanes, 64 elements a
// step, with no conversion to float and back: byte permutes (vpermb, vpermi2b) look the result up
// in the tables of fp8_sum_tables.h, which say why that is exact. Everything else is
// fp8_avx512.cpp's. This file is compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vbmi -mgfni
// (collectives/CMakeLists.txt) and runs only where best_vector_isa() says so.
//
// Why: on an AMD Zen 4 the float loops are bound by their 12 conversions per 64 elements (each
// vcvtph2ps / vcvtps2ph of 16 lanes takes 1.6 cycles there); these loops run 2.0 × (e5m2) and 2.3 ×
// (e4m3) as fast (evidence cpu2core-20261204-fp8-vbmi).
//
// Per 64 elements x and y: the magnitudes ca >= cb, the sign of the larger (of two equal ones,
// x's: the sum is then 2x or, signs differing, +0, which a mask sets), then the sum's code from the
// tables, saturated at the largest finite code, the sign, and NaN: e5m2 NaN inputs or infinities
// of both signs, e4m3 NaN inputs.
#include "collectives/cpu/fp8_lanes.h"
#include "collectives/cpu/fp8_sum_tables.h"

namespace ccbench {
namespace {

using I = __m512i;

[[gnu::always_inline]] inline I bytes(int v) { return _mm512_set1_epi8(static_cast<char>(v)); }

// A vgf2p8affineqb matrix whose output bit i is input bit from[i] (-1: zero).
constexpr std::uint64_t bit_matrix(const int (&from)[8]) {
  std::uint64_t m = 0;
  for (int i = 0; i < 8; ++i)
    if (from[i] >= 0) m |= std::uint64_t{1} << from[i] << (8 * (7 - i));
  return m;
}
constexpr int kHigh4Up1[8] = {-1, -1, -1, -1, 3, 4, 5, 6};  // (x >> 3) << 4, 7-bit x
template <const int (&kFrom)[8], int kXor>
[[gnu::always_inline]] inline I affine(I x) {
  return _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64(static_cast<long long>(bit_matrix(kFrom))), kXor);
}

// What both formats share before and after their lookups.
struct Pair {
  I ca, cb;      // magnitude codes, ca >= cb
  I larger;      // the input of magnitude ca (x where equal): its sign is the sum's
  __mmask64 sd;  // signs differ
};

[[gnu::always_inline]] inline Pair order(I x, I y) {
  const I mx = _mm512_and_si512(x, bytes(0x7f)), my = _mm512_and_si512(y, bytes(0x7f));
  return {_mm512_max_epu8(mx, my), _mm512_min_epu8(mx, my),
          _mm512_mask_blend_epi8(_mm512_cmplt_epu8_mask(mx, my), x, y), _mm512_movepi8_mask(_mm512_xor_si512(x, y))};
}

// The sum's magnitude code `r` with its sign; +0 where the magnitudes cancel.
[[gnu::always_inline]] inline I signed_sum(const Pair& p, I r) {
  const __mmask64 zero = _mm512_mask_cmpeq_epi8_mask(p.sd, p.ca, p.cb);
  return _mm512_mask_mov_epi8(_mm512_ternarylogic_epi32(r, p.larger, bytes(0x80), 0xf8), zero,  // r | (larger & 0x80)
                              _mm512_setzero_si512());
}

struct E5m2Regs {
  I offset0, offset1, units, code0, code1;
};

[[gnu::always_inline]] inline I sum_e5m2(I x, I y, const E5m2Regs& t) {
  using T = Fp8E5m2SumTables;
  constexpr int kInf = 0x7c, kMax = 0x7b, kNan = 0x7f;
  const Pair p = order(x, y);
  // The larger input with the offset from the table (the infinities: entry 63, offset 0).
  const I d = _mm512_min_epu8(_mm512_sub_epi8(p.ca, p.cb), bytes(T::kMaxDiff));
  I idx = _mm512_min_epu8(_mm512_ternarylogic_epi32(_mm512_slli_epi16(d, 2), p.cb, bytes(3), 0xf8), bytes(63));
  const __mmask64 inf = _mm512_cmpeq_epi8_mask(p.ca, bytes(kInf));
  idx = _mm512_mask_mov_epi8(idx, inf, bytes(63));
  idx = _mm512_mask_add_epi8(idx, p.sd, idx, bytes(64));
  I r = _mm512_adds_epi8(p.ca, _mm512_permutex2var_epi8(t.offset0, idx, t.offset1));
  // Small magnitudes: exact in units of 2^-16 (at most 112), rounded by the table.
  const I ua = _mm512_permutexvar_epi8(p.ca, t.units), ub = _mm512_permutexvar_epi8(p.cb, t.units);
  const I u = _mm512_mask_sub_epi8(_mm512_add_epi8(ua, ub), p.sd, ua, ub);
  r = _mm512_mask_blend_epi8(_mm512_cmplt_epu8_mask(p.ca, bytes(T::kSmall)), _mm512_min_epi8(r, bytes(kMax)),
                             _mm512_permutex2var_epi8(t.code0, u, t.code1));
  const I out = signed_sum(p, r);
  const __mmask64 nan =
      _mm512_cmpgt_epu8_mask(p.ca, bytes(kInf)) | (inf & _mm512_mask_cmpeq_epi8_mask(p.sd, p.ca, p.cb));
  return _mm512_mask_mov_epi8(out, nan, bytes(kNan));
}

struct E4m3Regs {
  I align0, align1, shifted0, shifted1, significand0, significand1, same0, same1, diff0, diff1, down0, down1;
};

[[gnu::always_inline]] inline I sum_e4m3(I x, I y, const E4m3Regs& t) {
  using T = Fp8E4m3SumTables;
  constexpr int kMax = 0x7e, kNan = 0x7f;
  const Pair p = order(x, y);
  const __mmask64 small = _mm512_cmplt_epu8_mask(p.ca, bytes(T::kSmall));
  // S = A ± B in eighths of a's step.
  const I a = _mm512_permutex2var_epi8(t.significand0, p.ca, t.significand1);
  const I field2 = _mm512_max_epu8(affine<kHigh4Up1, 0>(p.ca), bytes(16));  // 16 * max(exponent field, 1)
  const I at = _mm512_min_epu8(_mm512_add_epi8(field2, _mm512_permutex2var_epi8(t.align0, p.cb, t.align1)), bytes(127));
  const I b = _mm512_permutex2var_epi8(t.shifted0, at, t.shifted1);
  const I s = _mm512_mask_sub_epi8(_mm512_add_epi8(a, b), p.sd, a, b);
  const I halved = _mm512_ternarylogic_epi32(_mm512_srli_epi16(s, 1), s, bytes(1), 0xf8);  // s >> 1 | s & 1
  const I offset = _mm512_mask_blend_epi8(p.sd, _mm512_permutex2var_epi8(t.same0, halved, t.same1),
                                          _mm512_permutex2var_epi8(t.diff0, s, t.diff1));
  // The exponent field (at least 1) plus the offset; small sums through scale_down.
  I r = _mm512_adds_epi8(_mm512_srli_epi16(field2, 1), offset);  // field2's low bits are 0: nothing crosses bytes
  r = _mm512_min_epi8(r, bytes(kMax));
  r = _mm512_mask_mov_epi8(r, small, _mm512_permutex2var_epi8(t.down0, r, t.down1));
  return _mm512_mask_mov_epi8(signed_sum(p, r), _mm512_cmpeq_epi8_mask(p.ca, bytes(kNan)), bytes(kNan));
}

template <int ND, class Regs, I (*kSum)(I, I, const Regs&)>
std::size_t sum_loop(void* const* dstv, const void* const* srcv, std::size_t n, const Regs& t) {
  const auto* a = static_cast<const std::uint8_t*>(srcv[0]);
  const auto* b = static_cast<const std::uint8_t*>(srcv[1]);
  std::uint8_t* d[ND];
  for (int k = 0; k < ND; ++k) d[k] = static_cast<std::uint8_t*>(dstv[k]);
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const I r = kSum(_mm512_loadu_si512(a + i), _mm512_loadu_si512(b + i), t);  // both inputs read first
    for (int k = 0; k < ND; ++k) _mm512_storeu_si512(d[k] + i, r);
  }
  return i;
}

template <int ND>
std::size_t e5m2_sum(void* const* dst, const void* const* src, std::size_t n, int) {
  const Fp8E5m2SumTables& t = fp8_e5m2_sum_tables();
  const E5m2Regs regs{_mm512_load_si512(t.offset), _mm512_load_si512(t.offset + 64), _mm512_load_si512(t.units),
                      _mm512_load_si512(t.code), _mm512_load_si512(t.code + 64)};
  return sum_loop<ND, E5m2Regs, sum_e5m2>(dst, src, n, regs);
}

template <int ND>
std::size_t e4m3_sum(void* const* dst, const void* const* src, std::size_t n, int) {
  const Fp8E4m3SumTables& t = fp8_e4m3_sum_tables();
  const E4m3Regs regs{
      _mm512_load_si512(t.align),        _mm512_load_si512(t.align + 64),  _mm512_load_si512(t.shifted),
      _mm512_load_si512(t.shifted + 64), _mm512_load_si512(t.significand), _mm512_load_si512(t.significand + 64),
      _mm512_load_si512(t.same),         _mm512_load_si512(t.same + 64),   _mm512_load_si512(t.diff),
      _mm512_load_si512(t.diff + 64),    _mm512_load_si512(t.scale_down),  _mm512_load_si512(t.scale_down + 64)};
  return sum_loop<ND, E4m3Regs, sum_e4m3>(dst, src, n, regs);
}

// The byte-lane sum of two inputs into `nd` outputs, or nullptr where its tables did not derive.
Fp8Bulk table_sum(int e, int nd) {
  if (e == 5 ? !fp8_e5m2_sum_tables().ok : !fp8_e4m3_sum_tables().ok) return nullptr;
  switch (nd) {
    case 1: return e == 5 ? &e5m2_sum<1> : &e4m3_sum<1>;
    case 2: return e == 5 ? &e5m2_sum<2> : &e4m3_sum<2>;
    case 3: return e == 5 ? &e5m2_sum<3> : &e4m3_sum<3>;
    default: return nullptr;
  }
}

}  // namespace

Fp8Bulk fp8_bulk_avx512vbmi(int e, ReduceOp op, int nsrc, int ndst, bool finalize) {
  if (op == ReduceOp::sum && nsrc == 2 && !finalize)
    if (Fp8Bulk f = table_sum(e, ndst)) return f;
  return bulk_table<V512, FloatPolicy<V512>>(e, op, nsrc, ndst, finalize);
}

}  // namespace ccbench
