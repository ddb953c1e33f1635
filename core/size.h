#pragma once
// The one parser of byte sizes, for flags (-b 64K) and environment knobs
// (CCBENCH_CPU_SLOT_BYTES=256K) alike. Sizes are binary, as nccl-tests: K = 1024.
#include <cstdint>
#include <string>
#include <string_view>

namespace ccbench {

// Parses "8", "64K", "1M", "2G", "1T" (also "1KB", "1KiB", "8B", lower case). Throws
// Error(usage) naming `what` (a flag or a variable) for empty, non-numeric, negative or fractional
// numbers, unknown suffixes and values that overflow 64 bits, and saying what is valid.
std::uint64_t parse_size(std::string_view text, std::string_view what);

// Formats bytes the way the parser reads them when exact ("64K", "1G"), else plain bytes.
std::string format_size(std::uint64_t bytes);

}  // namespace ccbench
