#pragma once
// Element loops of the CPU executors. A ReduceKernels object is chosen once per (data type,
// operation) and holds function pointers to template loops over <T, op>, so that the hot loops
// have no switch inside and vectorise. reduce_pair() and finalize() (collectives/numeric.h)
// define the arithmetic: integers wrap around, avg reduces as sum and divides once, at finalize.
// Narrow floats (half, bfloat16, fp8) are reduced in float over all the inputs of one pass and
// rounded once (result_of: fp8 through half), as GPU kernels that reduce several inputs at once
// do: a pass of two inputs is exactly reduce_pair, one of three (a tree node) may round less.
// fp8 passes run a wide-vector loop (fp8_kernels.h) over their leading elements where the
// processor has one, the 8-lane loop over the rest; both compute the same bits.
//
// Aliasing: an output may be the same memory as an input (in-place collectives: same index);
// any other overlap is not allowed.
#include <cstddef>

#include "collectives/cpu/cpu_vectors.h"
#include "collectives/types.h"

namespace ccbench {

// The most inputs and outputs of one pass: a tree node reduces its input with two children's
// slots and writes its output and two children's slots.
inline constexpr int kMaxReduceSrc = 3;
inline constexpr int kMaxReduceDst = 3;

class ReduceKernels {
 public:
  // op none (data movement) supports only finalize-free copies. nranks: the divisor of avg.
  // isa: the widest vector loops to use (tests and benchmarks compare them; an isa this
  // processor lacks means the widest it has below it).
  ReduceKernels(DataType type, ReduceOp op, int nranks, VectorIsa isa = best_vector_isa());

  DataType type() const { return type_; }
  ReduceOp op() const { return op_; }
  size_t element_bytes() const { return esz_; }
  // Whether finalize() changes values (avg only).
  bool has_finalize() const { return op_ == ReduceOp::avg; }

  // dst[k][i] = src[0][i] op src[1][i] op ... for k < ndst, i < n; finalized (avg: divided by
  // nranks) when `finalize`. 1 <= nsrc <= kMaxReduceSrc, 1 <= ndst <= kMaxReduceDst; nsrc == 1
  // copies (and finalizes). Elements, not bytes.
  void reduce_multi(void* const* dst, int ndst, const void* const* src, int nsrc, size_t n, bool finalize) const;
  // dst = a op b.
  void reduce(void* dst, const void* a, const void* b, size_t n) const {
    const void* s[2] = {a, b};
    reduce_multi(&dst, 1, s, 2, n, false);
  }
  // dst1 = dst2 = a op b, finalized when `finalize`.
  void reduce_store2(void* dst1, void* dst2, const void* a, const void* b, size_t n, bool finalize) const {
    void* d[2] = {dst1, dst2};
    const void* s[2] = {a, b};
    reduce_multi(d, 2, s, 2, n, finalize);
  }
  // dst = finalize(src) element-wise (a copy unless avg).
  void finalize(void* dst, const void* src, size_t n) const { reduce_multi(&dst, 1, &src, 1, n, true); }

  using Loop = void (*)(void* const* dst, const void* const* src, size_t n, int nranks);
  // A loop over the leading elements of a pass (a multiple of its vector width, returned);
  // Loop does the rest.
  using Bulk = size_t (*)(void* const* dst, const void* const* src, size_t n, int nranks);
  struct Loops {
    Bulk bulk = nullptr;
    Loop rest = nullptr;
  };

 private:
  DataType type_;
  ReduceOp op_;
  size_t esz_;
  int nranks_;
  Loops loops_[kMaxReduceSrc][kMaxReduceDst][2] = {};  // [nsrc-1][ndst-1][finalize]
};

// dst[k] = src (bytes) for k < ndst, reading src once; a dst equal to src is skipped.
void copy_multi(void* const* dst, int ndst, const void* src, size_t bytes);

}  // namespace ccbench
