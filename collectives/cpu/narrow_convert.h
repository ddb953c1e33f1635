#pragma once
// Block conversions between float and the narrow floats (half, bfloat16, f8e4m3, f8e5m2): the
// CPU reduce loops of processors without AVX2 and F16C widen every input block to float, reduce
// there and narrow the result once (reduce_kernels.cpp; with AVX2 and F16C they do the same in
// registers, collectives/cpu/narrow_lanes.h). Vectorised with AVX2 and F16C where the processor
// has them (asked once per process), element by element otherwise; both give bit for bit what
// collectives/numeric.h gives element by element: widen = to_arith(), narrow = result_of() (fp8
// through half, as NCCL), for every value, NaN included.
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
// The converters of narrow float `t`: the vectorised ones where `vectorised` and
// vector_isa_available(VectorIsa::avx2) (cpu_vectors.h), else element by element. Throws
// Error(runtime) for another type.
NarrowConverters narrow_converters(DataType t, bool vectorised = true);

}  // namespace ccbench
