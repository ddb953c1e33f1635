#pragma once
// Block conversions between float and the narrow floats (half, bfloat16, f8e4m3, f8e5m2) for the
// CPU reduce loops (reduce_kernels.cpp), which widen every input to float, reduce there and narrow
// the result once. Vectorised with AVX2 and F16C where the processor has them (asked once per
// process), element by element otherwise; both give bit for bit what collectives/numeric.h gives
// element by element: widen = to_arith(), narrow = result_of() (fp8 through half, as NCCL),
// for every value, NaN included. Element by element, a half or bfloat16 reduction ran at 1.2 and
// 7.7 GB/s against float's 21 to 41 GB/s (tests/benchmarks/microbench.cpp, BM_Reduce, 2 MiB to
// 64 MiB, on the 2-core CI VM); docs/results.md has the vectorised figures.
#include <cstddef>

#include "collectives/types.h"

namespace ccbench {

using WidenFn = void (*)(float* dst, const void* src, size_t n);   // n elements of the narrow type
using NarrowFn = void (*)(void* dst, const float* src, size_t n);  // n floats, rounded (result_of)

struct NarrowConverters {
  WidenFn widen = nullptr;
  NarrowFn narrow = nullptr;
};

// Whether `t` is a narrow float (half, bfloat16, f8e4m3, f8e5m2).
bool is_narrow_float_type(DataType t);
// The converters of narrow float `t`: the vectorised ones where narrow_vectors_available() and
// `vectorised`, else element by element. Throws Error(runtime) for another type.
NarrowConverters narrow_converters(DataType t, bool vectorised = true);
// AVX2 and F16C on this processor (x86-64 only), checked once.
bool narrow_vectors_available();

}  // namespace ccbench
