#include "harness/engine/sizes.h"

#include <cmath>
#include <limits>

#include "core/error.h"

namespace ccbench {

namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

}  // namespace

std::vector<std::uint64_t> sweep_sizes(const SweepSpec& s) {
  if (s.min_bytes == 0) fail(ExitCode::usage, "-b/--minbytes: the smallest size must be at least 1 byte");
  if (s.min_bytes > s.max_bytes)
    fail(ExitCode::usage, "-b/--minbytes {} is larger than -e/--maxbytes {}: the sweep would be empty",
         format_size(s.min_bytes), format_size(s.max_bytes));
  if (s.increment == 0 && !(s.factor > 1.0) && s.min_bytes != s.max_bytes)
    fail(ExitCode::usage, "-f/--stepfactor {} never advances the sweep: give a factor > 1 or an increment -i > 0",
         s.factor);
  if (!std::isfinite(s.factor)) fail(ExitCode::usage, "-f/--stepfactor must be a finite number > 1");
  std::vector<std::uint64_t> sizes;
  std::uint64_t size = s.min_bytes;
  while (true) {
    sizes.push_back(size);
    if (sizes.size() > kMaxSweepSizes)
      fail(ExitCode::usage, "the sweep from {} to {} has more than {} sizes; use a larger -f or -i",
           format_size(s.min_bytes), format_size(s.max_bytes), kMaxSweepSizes);
    std::uint64_t next;
    if (s.increment) {
      if (size > kMax - s.increment) break;
      next = size + s.increment;
    } else {
      double d = std::floor(static_cast<double>(size) * s.factor);
      if (d >= static_cast<double>(kMax)) break;
      // A small factor on a small size still advances; a factor <= 0 (allowed when -b = -e) gives
      // d <= 0, which must not be cast to an unsigned type.
      next = d > 0 ? static_cast<std::uint64_t>(d) : 0;
      if (next <= size) next = size + 1;
    }
    if (next > s.max_bytes) break;
    size = next;
  }
  if (s.end_included && sizes.back() < s.max_bytes) sizes.push_back(s.max_bytes);
  return sizes;
}

}  // namespace ccbench
