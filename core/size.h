#pragma once
// Byte sizes, the one place they are spelled: the parser for flags (-b 64K) and environment
// knobs (CCBENCH_CPU_SLOT_BYTES=256K) alike, its inverse for arguments and case names ("64K"),
// and the form for people ("64 KiB"). Sizes are binary, as nccl-tests: K = 1024.
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

// A byte count for people: "8 B", "1 KiB", "1.50 MiB" (binary units, as the command line).
std::string human_size(std::uint64_t bytes);

}  // namespace ccbench
