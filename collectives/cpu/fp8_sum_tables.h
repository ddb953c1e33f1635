#pragma once
// The lookup tables of the fp8 sums of two inputs computed in byte lanes (fp8_avx512vbmi.cpp says
// how its loops use them), derived once per process from collectives/numeric.h's own arithmetic
// (reduce_pair, from_float): each entry takes the one value that every input pair reaching it
// needs. Where two pairs would need different values the derivation fails: `ok` is false and
// fp8_bulk keeps the float loops (tests/unit/test_fp8_kernels.cpp requires ok, and checks every
// pair through the loops). Structs and declarations only: the file including this one is compiled
// for another instruction set, so it must not call inline functions of a header (fp8_lanes.h).
//
// Codes below are magnitudes (the low 7 bits); of the two inputs, a has the larger magnitude
// code ca, b the other (cb), and sd says whether their signs differ.
#include <cstdint>

namespace ccbench {

// f8e5m2. The sum's code is ca plus an offset that depends only on (ca - cb, the low 2 bits of
// cb, sd) once a is at least 2^-10 (code 20): fp8 codes step through each binade alike, so a sum
// relative to a rounds alike in every binade where no subnormal takes part. From a difference of
// 16 codes on (4 binades) b never moves a.
struct Fp8E5m2SumTables {
  static constexpr int kSmall = 20;    // codes below: both inputs at most 56 * 2^-16, summed exactly
  static constexpr int kMaxDiff = 16;  // ca - cb from here on: the sum is a
  // [sd * 64 + min(min(ca - cb, kMaxDiff) * 4 + (cb & 3), 63)]: the sum's code less ca; entry 63
  // of each half is 0 (where every difference from kMaxDiff on and the infinities go).
  alignas(64) std::int8_t offset[128];
  alignas(64) std::uint8_t units[64];  // code (below kSmall) -> magnitude in units of 2^-16
  alignas(64) std::uint8_t code[128];  // magnitude in units of 2^-16 -> code, rounded as result_of
  bool ok = false;
};

// f8e4m3 (3 significand bits: the offset above would need 320 entries per sign). The sum is
// formed in eighths of a's step: S = A ± B, A = a's significand (hidden bit included) * 8, B = b
// in those units with the bits shifted out kept as one sticky bit; then S (signs alike: S / 2,
// sticky) indexes the sum's code less a's exponent field, exponents below 1 (subnormals) counted
// as 1. Where a is below 2^-2 (code 40) the sum may be subnormal, which the codes do not step
// through alike: there the tables give the code of the sum times 2^7 (a normal, rounded alike:
// below 2^-6 every sum is exact) less the 56 codes of that scaling, which `scale_down` maps back.
struct Fp8E4m3SumTables {
  static constexpr int kSmall = 40;  // ca below: the scaled sum
  static constexpr float kScale = 128.0f;
  static constexpr int kScaledField = 56;  // 7 binades of 8 codes: what scaling adds to a code
  // [c] -> c's significand (hidden bit included, 0-15) - 16 * max(c's exponent field, 1), mod
  // 256: added to 16 * max(ca's exponent field, 1) it gives 16 * exponent difference + b's
  // significand, the index of `shifted` (saturated at 127: b is then sticky alone).
  alignas(64) std::uint8_t align[128];
  alignas(64) std::uint8_t shifted[128];      // [16 * d + sig] -> (sig * 8) >> d, | 1 where bits fell out
  alignas(64) std::uint8_t significand[128];  // [c] -> c's significand * 8: A
  alignas(64) std::int8_t same[128];          // [S / 2 | S & 1] -> the sum's code less the field, signs alike
  alignas(64) std::int8_t diff[128];          // [S] -> the same, signs differ (a zero sum: masked)
  // [(c - kScaledField) mod 128] -> the code of c's value / kScale, c the scaled sum's code (these
  // indices, -48 to 48, wrap to 80-127 and 0-48).
  alignas(64) std::uint8_t scale_down[128];
  bool ok = false;
};

const Fp8E5m2SumTables& fp8_e5m2_sum_tables();
const Fp8E4m3SumTables& fp8_e4m3_sum_tables();

}  // namespace ccbench
