#pragma once
// Size strings and the size sweep, as nccl-tests: binary suffixes (K = 1024), a start, an end and
// either a multiplicative factor (-f) or an increment (-i).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

// Parses "8", "64K", "1M", "2G", "1T" (also "1KB", "1KiB", lower case). Throws Error(usage)
// naming the flag for empty, non-numeric, negative or fractional numbers, unknown suffixes and
// values that overflow 64 bits.
std::uint64_t parse_size(std::string_view text, std::string_view flag);

// Formats bytes the way the parser reads them when exact ("64K", "1G"), else plain bytes.
std::string format_size(std::uint64_t bytes);

struct SweepSpec {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 8;
  double factor = 2.0;        // used when increment == 0
  std::uint64_t increment = 0;
};

// Checks a sweep (min > 0, min <= max, a factor > 1 or an increment > 0) and throws
// Error(usage) saying what is valid; then lists its sizes (at most 10000).
std::vector<std::uint64_t> sweep_sizes(const SweepSpec& spec);

}  // namespace ccbench
