#pragma once
// The vector instruction sets of the CPU reduce loops: which one this processor and this build
// offer. The one place that asks the processor (CPUID), once per process; every loop that needs a
// set is chosen through here (ReduceKernels, narrow_convert.h), and tests name a set to compare
// its loops with the element-by-element code.
#include <string>
#include <string_view>

namespace ccbench {

// Ordered: each set includes the one before it.
enum class VectorIsa {
  portable,    // no vector loop of ours (any processor)
  avx2,        // AVX2 + F16C: 8-lane narrow floats (narrow_lanes.h), 32-element fp8 loops (fp8_kernels.h)
  avx512,      // + AVX-512 F, BW and VL: 64-element fp8 loops
  avx512vbmi,  // + AVX-512 VBMI and GFNI: fp8 sums of two inputs in byte lanes (table lookups)
  avx512fp16,  // + AVX-512 FP16: fp8 sums and products of two inputs in half arithmetic
};
inline constexpr VectorIsa kAllVectorIsas[] = {VectorIsa::portable, VectorIsa::avx2, VectorIsa::avx512,
                                               VectorIsa::avx512vbmi, VectorIsa::avx512fp16};

std::string_view name(VectorIsa isa);
// Whether loops for `isa` are built in and this processor runs them.
bool vector_isa_available(VectorIsa isa);
// Why `isa` is not available ("this processor has no AVX-512 FP16", "this build has no ... loops");
// empty when it is.
std::string vector_isa_missing(VectorIsa isa);
// The widest available set (portable at least).
VectorIsa best_vector_isa();

}  // namespace ccbench
