#include "collectives/cpu/fp8_kernels.h"

namespace ccbench {

Fp8Bulk fp8_bulk(VectorIsa isa, DataType type, ReduceOp op, int nsrc, int ndst, bool finalize) {
  if (type != DataType::f8e4m3 && type != DataType::f8e5m2) return nullptr;
  if (!vector_isa_available(isa)) return nullptr;
  const int e = type == DataType::f8e4m3 ? 4 : 5;
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::avx2: return fp8_bulk_avx2(e, op, nsrc, ndst, finalize);
#endif
#if defined(CCBENCH_FP8_AVX512)
    case VectorIsa::avx512: return fp8_bulk_avx512(e, op, nsrc, ndst, finalize);
#endif
#if defined(CCBENCH_FP8_AVX512VBMI)
    case VectorIsa::avx512vbmi: return fp8_bulk_avx512vbmi(e, op, nsrc, ndst, finalize);
#endif
#if defined(CCBENCH_FP8_AVX512FP16)
    case VectorIsa::avx512fp16: return fp8_bulk_avx512fp16(e, op, nsrc, ndst, finalize);
#endif
    default: return nullptr;
  }
}

}  // namespace ccbench
