// The fp8 loops for AVX2 + F16C, 32 elements per step: this file is compiled with -mavx2 -mf16c
// (collectives/CMakeLists.txt) and runs only where best_vector_isa() says so.
#include "collectives/cpu/fp8_lanes.h"

namespace ccbench {

Fp8Bulk fp8_bulk_avx2(int e, ReduceOp op, int nsrc, int ndst, bool finalize) {
  return bulk_table<V256, FloatPolicy<V256>>(e, op, nsrc, ndst, finalize);
}

}  // namespace ccbench
