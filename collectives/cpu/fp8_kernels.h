#pragma once
// fp8 (f8e4m3, f8e5m2) reduction loops in wide vectors: 32 elements per step with AVX2 + F16C,
// 64 with AVX-512 BW, sums of two inputs in byte lanes with AVX-512 VBMI (fp8_avx512vbmi.cpp),
// sums and products of two inputs in half arithmetic with AVX-512 FP16 (fp8_lanes.h says how).
// ReduceKernels runs one over the leading elements of a pass and its 8-lane loop over the rest.
// Each computes what collectives/numeric.h computes element by element (reduce_pair, result_of,
// finalize), bit for bit: tests/unit/test_fp8_kernels.cpp checks every input pair and triple of
// both formats, every operation and each instruction set.
#include <cstddef>

#include "collectives/cpu/cpu_vectors.h"
#include "collectives/types.h"

namespace ccbench {

// dst[k][i] = src[0][i] op src[1][i] (op src[2][i]) for k < ndst and i below the returned count,
// the largest multiple of the vector width not above n (bytes = elements); finalized (divided by
// nranks) when the loop was asked for with `finalize`. An output may be an input (same index).
using Fp8Bulk = std::size_t (*)(void* const* dst, const void* const* src, std::size_t n, int nranks);

// The loop for `isa` of fp8 type `type`, op sum, prod, min or max (avg: sum, with `finalize` on
// the pass that divides), 1..3 inputs (1 only with finalize), 1..3 outputs; nullptr where `isa`
// has none: no vectors (portable), an isa this build or processor lacks, or e4m3's avg division
// and its products of three inputs (fp8_lanes.h says why).
Fp8Bulk fp8_bulk(VectorIsa isa, DataType type, ReduceOp op, int nsrc, int ndst, bool finalize);

// The same for one instruction set (e: exponent bits, 4 or 5), each defined in a file of its own
// compiled for that set (fp8_avx2.cpp, fp8_avx512.cpp, fp8_avx512vbmi.cpp, fp8_avx512fp16.cpp);
// fp8_bulk chooses.
Fp8Bulk fp8_bulk_avx2(int e, ReduceOp op, int nsrc, int ndst, bool finalize);
Fp8Bulk fp8_bulk_avx512(int e, ReduceOp op, int nsrc, int ndst, bool finalize);
Fp8Bulk fp8_bulk_avx512vbmi(int e, ReduceOp op, int nsrc, int ndst, bool finalize);
Fp8Bulk fp8_bulk_avx512fp16(int e, ReduceOp op, int nsrc, int ndst, bool finalize);

}  // namespace ccbench
