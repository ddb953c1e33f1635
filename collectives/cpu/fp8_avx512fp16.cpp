// The fp8 loops for AVX-512 FP16: sums and products of two inputs in half arithmetic (vaddph,
// vmulph: no conversion to float and back), the rest as fp8_avx512.cpp. This file is compiled
// with the AVX-512 flags plus -mavx512fp16 (collectives/CMakeLists.txt) and runs only where
// best_vector_isa() says so.
#include "collectives/cpu/fp8_lanes.h"

namespace ccbench {
namespace {

// Three inputs or a division round once in float, as numeric.h; half arithmetic would round
// after every step.
struct HalfPolicy {
  template <int E, ReduceOp OP, int NS, bool FIN>
  using Math = std::conditional_t<NS == 2 && !FIN, HalfMath<E>, FloatMath<V512, E>>;
};

}  // namespace

Fp8Bulk fp8_bulk_avx512fp16(int e, ReduceOp op, int nsrc, int ndst, bool finalize) {
  return bulk_table<V512, HalfPolicy>(e, op, nsrc, ndst, finalize);
}

}  // namespace ccbench
