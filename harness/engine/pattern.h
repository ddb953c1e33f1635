#pragma once
// The input pattern of one measurement; plain data shared with the GPU check kernels.
#include <cstddef>
#include <cstdint>

#include "collectives/types.h"

namespace ccbench {

// The pattern of one measurement (collectives/verifiable.h).
struct PatternSpec {
  Collective coll = Collective::allreduce;
  DataType dtype = DataType::float32;
  ReduceOp op = ReduceOp::sum;
  std::uint64_t seed = 0;
  int rank = 0;
  int nranks = 1;
  int root = 0;
  std::size_t count = 0;  // CollectiveShape::count
  InputPattern pattern = InputPattern::integer;
};

}  // namespace ccbench
