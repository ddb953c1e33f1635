#include "core/knobs.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include <fmt/ranges.h>

#include "core/error.h"
#include "core/size.h"

extern char** environ;  // POSIX: the process environment

namespace ccbench {

namespace {

constexpr const char* kSuffixNote = "K, M, G and T are powers of 1024";

// "a multiple of 64 from 64 to 64M" or "from 1 to 1G".
std::string size_range_text(const KnobRange& r) {
  std::string text = "from " + format_size(r.lo) + " to " + format_size(r.hi);
  return r.multiple > 1 ? "a multiple of " + format_size(r.multiple) + " " + text : text;
}

}  // namespace

std::vector<std::string> tuning_settings() {
  static constexpr std::string_view kPrefixes[] = {"CCBENCH_GPU_", "CCBENCH_CPU_", "CCBENCH_ONESHOT_", "CCBENCH_BEST_"};
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view kv(*e);
    for (std::string_view p : kPrefixes)
      if (kv.substr(0, p.size()) == p && kv.find('=') != std::string_view::npos) out.emplace_back(kv);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> env_text(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::uint64_t knob_size(std::string_view name, std::string_view text, KnobRange valid) {
  std::uint64_t value = 0;
  try {
    value = parse_size(text, name);
  } catch (const Error& e) {
    // The parser's reason without its "NAME: " prefix.
    std::string_view reason = e.what();
    if (reason.starts_with(name)) reason.remove_prefix(std::min(reason.size(), name.size() + 2));
    fail(ExitCode::usage, "{}='{}' is invalid ({}): give a size in bytes, {} ({})", name, text, reason,
         size_range_text(valid), kSuffixNote);
  }
  if (value < valid.lo || value > valid.hi || value % valid.multiple != 0)
    fail(ExitCode::usage, "{}='{}' is invalid: give a size in bytes, {} ({})", name, text, size_range_text(valid),
         kSuffixNote);
  return value;
}

std::int64_t knob_int(std::string_view name, std::string_view text, std::int64_t lo, std::int64_t hi) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi)
    fail(ExitCode::usage, "{}='{}' is invalid: give an integer from {} to {}", name, text, lo, hi);
  return value;
}

std::size_t knob_choice(std::string_view name, std::string_view text, const std::vector<std::string_view>& valid) {
  const auto it = std::find(valid.begin(), valid.end(), text);
  if (it == valid.end())
    fail(ExitCode::usage, "{}='{}' is invalid: give one of {}", name, text, fmt::join(valid, ", "));
  return static_cast<std::size_t>(it - valid.begin());
}

std::uint64_t env_size(const char* name, std::uint64_t fallback, KnobRange valid) {
  auto text = env_text(name);
  return text ? knob_size(name, *text, valid) : fallback;
}

std::int64_t env_int(const char* name, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  auto text = env_text(name);
  return text ? knob_int(name, *text, lo, hi) : fallback;
}

std::size_t env_choice(const char* name, std::size_t fallback, const std::vector<std::string_view>& valid) {
  auto text = env_text(name);
  return text ? knob_choice(name, *text, valid) : fallback;
}

}  // namespace ccbench
