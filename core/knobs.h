#pragma once
// Environment knobs: tuning variables (CCBENCH_CPU_SLOT_BYTES, CCBENCH_GPU_SLOT_BYTES, ...) read
// the same way in every layer. Unset or empty means the default; anything else must be valid:
// a bad value is Error(usage) naming the variable, the value and what is valid (never silently
// replaced by the default).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

// What a numeric knob accepts: lo <= value <= hi and value % multiple == 0.
struct KnobRange {
  std::uint64_t lo = 0;
  std::uint64_t hi = UINT64_MAX;
  std::uint64_t multiple = 1;
};

// The variable's text; nullopt when unset or empty.
std::optional<std::string> env_text(const char* name);

// A byte size with the suffixes of core/size.h ("256K"), or `fallback` when unset.
std::uint64_t env_size(const char* name, std::uint64_t fallback, KnobRange valid);

// A whole decimal number, or `fallback` when unset.
std::int64_t env_int(const char* name, std::int64_t fallback, std::int64_t lo, std::int64_t hi);

// One of the words in `valid` (exactly as spelled), or `fallback` when unset; the index of the word.
std::size_t env_choice(const char* name, std::size_t fallback, const std::vector<std::string_view>& valid);

// The tuning variables set in this process, "NAME=VALUE" sorted by name: every CCBENCH_GPU_*,
// CCBENCH_CPU_*, CCBENCH_ONESHOT_* and CCBENCH_BEST_* variable. They size buffers, channels and
// blocks that two ranks must lay out alike, so every rank of a run must have the same
// (harness/job/bootstrap.h: check_same_tuning). Per-rank variables (CCBENCH_HOSTID, CCBENCH_FAULT,
// CCBENCH_TCP_IF, ...) are not among them.
std::vector<std::string> tuning_settings();

// The same checks on a value already read (the knob functions above use them; tests call them
// without touching the environment).
std::uint64_t knob_size(std::string_view name, std::string_view text, KnobRange valid);
std::int64_t knob_int(std::string_view name, std::string_view text, std::int64_t lo, std::int64_t hi);
std::size_t knob_choice(std::string_view name, std::string_view text, const std::vector<std::string_view>& valid);

}  // namespace ccbench
