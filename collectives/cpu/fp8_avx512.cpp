// The fp8 loops for AVX-512 F, BW and VL, 64 elements per step: this file is compiled with
// -mavx512f -mavx512bw -mavx512vl -mavx2 -mf16c (collectives/CMakeLists.txt) and runs only where
// best_vector_isa() says so.
#include "collectives/cpu/fp8_lanes.h"

namespace ccbench {

Fp8Bulk fp8_bulk_avx512(int e, ReduceOp op, int nsrc, int ndst, bool finalize) {
  return bulk_table<V512, FloatPolicy<V512>>(e, op, nsrc, ndst, finalize);
}

}  // namespace ccbench
