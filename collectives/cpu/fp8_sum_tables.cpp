#include "collectives/cpu/fp8_sum_tables.h"

#include <algorithm>
#include <climits>

#include "collectives/numeric.h"

namespace ccbench {
namespace {

// The values an entry may take: every input pair reaching it narrows the range; a pair whose sum
// saturates (the largest finite code) only bounds it from below.
struct Range {
  int lo = INT_MIN, hi = INT_MAX;
  void need(int v) {
    lo = std::max(lo, v);
    hi = std::min(hi, v);
  }
  void at_least(int v) { lo = std::max(lo, v); }
  bool empty() const { return lo > hi; }
  // The entry: 0 where allowed (entries no pair reaches), else the least allowed value.
  int pick() const { return lo <= 0 && hi >= 0 ? 0 : lo; }
};

// The magnitude code of a + b (a, b codes with their sign bits), as reduce_pair computes it.
template <int E>
int sum_code(int a, int b) {
  return reduce_pair(ReduceOp::sum, fp8_t<E>{static_cast<std::uint8_t>(a)}, fp8_t<E>{static_cast<std::uint8_t>(b)})
             .bits &
         0x7f;
}

// Fills `table` from the ranges; false if one is empty.
template <typename T>
bool fill_entries(T* table, const Range* ranges, int n) {
  for (int i = 0; i < n; ++i) {
    if (ranges[i].empty()) return false;
    table[i] = static_cast<T>(ranges[i].pick());
  }
  return true;
}

Fp8E5m2SumTables derive_e5m2() {
  using T = Fp8E5m2SumTables;
  constexpr int kMax = fp8_e5m2_t::kMaxFinite;
  T t;
  Range r[128];
  for (int sd = 0; sd < 2; ++sd)
    for (int ca = T::kSmall; ca <= kMax; ++ca)
      for (int cb = 0; cb <= ca; ++cb) {
        if (sd && ca == cb) continue;  // a zero sum: the loop sets it
        const int i = sd * 64 + std::min((std::min(ca - cb, T::kMaxDiff) << 2) | (cb & 3), 63);
        const int sum = sum_code<5>(ca, cb | sd << 7);
        if (sum == kMax) r[i].at_least(kMax - ca);
        else r[i].need(sum - ca);
      }
  r[63].need(0);  // the infinities' entries
  r[127].need(0);
  if (!fill_entries(t.offset, r, 128)) return t;
  for (int c = 0; c < 64; ++c)
    t.units[c] =
        c < T::kSmall ? static_cast<std::uint8_t>(fp8_e5m2_t{static_cast<std::uint8_t>(c)}.to_float() * 65536.0f) : 0;
  for (int u = 0; u < 128; ++u) t.code[u] = result_of<fp8_e5m2_t>(static_cast<float>(u) / 65536.0f).bits;
  t.ok = true;
  return t;
}

Fp8E4m3SumTables derive_e4m3() {
  using T = Fp8E4m3SumTables;
  constexpr int kMax = fp8_e4m3_t::kMaxFinite;
  T t;
  for (int c = 0; c < 128; ++c) {
    const int significand = std::min(c, (c & 7) | 8);
    t.align[c] = static_cast<std::uint8_t>(significand - 16 * std::max(c >> 3, 1));
    t.significand[c] = static_cast<std::uint8_t>(significand << 3);
    const int scaled = (c + T::kScaledField) & 0x7f;  // the scaled sum's code this index stands for
    t.scale_down[c] =
        scaled == 0x7f
            ? 0
            : fp8_e4m3_t::from_float(fp8_e4m3_t{static_cast<std::uint8_t>(scaled)}.to_float() / T::kScale).bits;
  }
  for (int i = 0; i < 128; ++i) {
    const int d = i >> 4, v = (i & 15) << 3, s = v >> d;
    t.shifted[i] = static_cast<std::uint8_t>((s << d) == v ? s : s | 1);
  }
  Range same[128], diff[128];
  for (int sd = 0; sd < 2; ++sd)
    for (int ca = 0; ca <= kMax; ++ca)
      for (int cb = 0; cb <= ca; ++cb) {
        if (sd && ca == cb) continue;  // a zero sum: the loop sets it
        const int A = t.significand[ca];
        const int B = t.shifted[std::min(((std::max(ca >> 3, 1) << 4) + t.align[cb]) & 0xff, 127)];
        const int S = sd ? A - B : A + B;  // 0-120 (signs differ), 0-240 (alike)
        Range& r = sd ? diff[S] : same[(S >> 1) | (S & 1)];
        const bool small = ca < T::kSmall;
        int sum = sum_code<4>(ca, cb | sd << 7);
        if (small) sum = fp8_e4m3_t::from_float(fp8_e4m3_t{static_cast<std::uint8_t>(sum)}.to_float() * T::kScale).bits;
        const int field = std::max(ca & 0x78, 8) + (small ? T::kScaledField : 0);
        if (sum == kMax) r.at_least(kMax - field);
        else r.need(sum - field);
      }
  if (!fill_entries(t.same, same, 128) || !fill_entries(t.diff, diff, 128)) return t;
  t.ok = true;
  return t;
}

}  // namespace

const Fp8E5m2SumTables& fp8_e5m2_sum_tables() {
  static const Fp8E5m2SumTables t = derive_e5m2();
  return t;
}

const Fp8E4m3SumTables& fp8_e4m3_sum_tables() {
  static const Fp8E4m3SumTables t = derive_e4m3();
  return t;
}

}  // namespace ccbench
