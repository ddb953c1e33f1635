#include "collectives/cpu/cpu_vectors.h"

#include <array>
#include <iterator>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace ccbench {

namespace {

#if defined(__x86_64__)
// F16C is CPUID leaf 1, ECX bit 29, and AVX-512 FP16 leaf 7 (subleaf 0), EDX bit 23; read them
// directly because clang 14 knows neither name in __builtin_cpu_supports. The AVX-512 names it
// does know also check that the operating system saves the 512-bit registers. Every processor
// with AVX-512 FP16 has VBMI and GFNI, so each set includes the one before it.
bool cpuid_bit(unsigned leaf, unsigned reg_index, unsigned bit) {
  unsigned r[4] = {};
  if (!__get_cpuid_count(leaf, 0, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[reg_index] & bit) != 0;
}
constexpr unsigned kEcx = 2, kEdx = 3;

bool processor_has(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::portable: return true;
    case VectorIsa::avx2: return __builtin_cpu_supports("avx2") && cpuid_bit(1, kEcx, bit_F16C);
    case VectorIsa::avx512:
      return processor_has(VectorIsa::avx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    case VectorIsa::avx512vbmi:
      return processor_has(VectorIsa::avx512) && __builtin_cpu_supports("avx512vbmi") && cpuid_bit(7, kEcx, bit_GFNI);
    case VectorIsa::avx512fp16: return processor_has(VectorIsa::avx512vbmi) && cpuid_bit(7, kEdx, bit_AVX512FP16);
  }
  return false;
}
#else
bool processor_has(VectorIsa isa) { return isa == VectorIsa::portable; }
#endif

// Whether the build compiled the loops of `isa` (collectives/CMakeLists.txt: x86-64 and a
// compiler that knows the set's flags).
bool built_in(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::portable: return true;
#if defined(__x86_64__)
    case VectorIsa::avx2: return true;  // target attributes (narrow_lanes.h) and -mavx2 (fp8_avx2.cpp)
#endif
#if defined(CCBENCH_FP8_AVX512)
    case VectorIsa::avx512: return true;
#endif
#if defined(CCBENCH_FP8_AVX512VBMI)
    case VectorIsa::avx512vbmi: return true;
#endif
#if defined(CCBENCH_FP8_AVX512FP16)
    case VectorIsa::avx512fp16: return true;
#endif
    default: return false;
  }
}

// Asked once per process, for every set of kAllVectorIsas.
bool processor_runs(VectorIsa isa) {
  static const auto has = [] {
    std::array<bool, std::size(kAllVectorIsas)> h{};
    for (VectorIsa i : kAllVectorIsas) h[static_cast<std::size_t>(i)] = processor_has(i);
    return h;
  }();
  return has[static_cast<std::size_t>(isa)];
}

}  // namespace

std::string_view name(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::portable: return "portable";
    case VectorIsa::avx2: return "AVX2+F16C";
    case VectorIsa::avx512: return "AVX-512 BW";
    case VectorIsa::avx512vbmi: return "AVX-512 VBMI";
    case VectorIsa::avx512fp16: return "AVX-512 FP16";
  }
  return "?";
}

std::string vector_isa_missing(VectorIsa isa) {
  if (!built_in(isa))
    return "this build has no " + std::string(name(isa)) +
           " loops (an x86-64 compiler that knows its flags builds them)";
  if (!processor_runs(isa)) return "this processor has no " + std::string(name(isa));
  return "";
}

bool vector_isa_available(VectorIsa isa) { return built_in(isa) && processor_runs(isa); }

VectorIsa best_vector_isa() {
  static const VectorIsa best = [] {
    VectorIsa b = VectorIsa::portable;
    for (VectorIsa isa : kAllVectorIsas)
      if (vector_isa_available(isa)) b = isa;
    return b;
  }();
  return best;
}

}  // namespace ccbench
