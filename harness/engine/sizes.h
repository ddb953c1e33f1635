#pragma once
// The size sweep, as nccl-tests: a start, an end and either a multiplicative factor (-f) or an
// increment (-i). Sizes themselves are parsed by core/size.h (binary suffixes, K = 1024).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/size.h"  // parse_size, format_size: included here for the sweep's users

namespace ccbench {

// More sizes than anyone reads in a table, and a bound on a sweep's run time (-i 1 up to 1G would
// otherwise plan a billion sizes).
inline constexpr std::size_t kMaxSweepSizes = 10000;

struct SweepSpec {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 8;
  double factor = 2.0;  // used when increment == 0
  std::uint64_t increment = 0;
  // The last size is max_bytes itself even where a step goes past it (`links -e 4M -f 8`: 8 .. 2M
  // and 4M). Off for `run`, whose sweep is nccl-tests' (-e 100 -f 4: 8, 32).
  bool end_included = false;
};

// Checks a sweep (min > 0, min <= max, a factor > 1 or an increment > 0) and throws
// Error(usage) saying what is valid; then lists its sizes (at most kMaxSweepSizes).
std::vector<std::uint64_t> sweep_sizes(const SweepSpec& spec);

}  // namespace ccbench
