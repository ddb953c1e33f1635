#include "core/size.h"

#include <cctype>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"

namespace ccbench {

namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
constexpr const char* kSizeHelp = "a whole number of bytes with an optional suffix K, M, G or T (powers of 1024)";

// log2 of the multiplier a suffix stands for; -1 when unknown.
int suffix_shift(std::string suffix) {
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.empty() || suffix == "B") return 0;
  const char* letters = "KMGT";
  for (int i = 0; letters[i]; ++i) {
    const std::string l(1, letters[i]);
    if (suffix == l || suffix == l + "B" || suffix == l + "IB") return 10 * (i + 1);
  }
  return -1;
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  if (text.empty()) fail(ExitCode::usage, "{}: empty size; expected {}", what, kSizeHelp);
  if (text.front() == '-') fail(ExitCode::usage, "{}: negative size '{}'; expected {}", what, text, kSizeHelp);
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) fail(ExitCode::usage, "{}: size '{}' does not fit in 64 bits", what, text);
  if (ec != std::errc() || end == text.data())
    fail(ExitCode::usage, "{}: '{}' is not a size; expected {}", what, text, kSizeHelp);
  const std::string suffix(end, text.data() + text.size());
  const int shift = suffix_shift(suffix);
  if (shift < 0 && suffix[0] == '.')
    fail(ExitCode::usage, "{}: fractional size '{}'; expected {}", what, text, kSizeHelp);
  if (shift < 0)
    fail(ExitCode::usage, "{}: unknown size suffix '{}' in '{}'; expected {}", what, suffix, text, kSizeHelp);
  if (shift && value > (kMax >> shift)) fail(ExitCode::usage, "{}: size '{}' does not fit in 64 bits", what, text);
  return value << shift;
}

std::string format_size(std::uint64_t bytes) {
  const char* suffixes[] = {"", "K", "M", "G", "T"};
  int i = 0;
  while (i < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++i;
  }
  return std::to_string(bytes) + suffixes[i];
}

std::string human_size(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  std::uint64_t scale = 1;
  while (u + 1 < 7 && bytes / scale >= 1024) {
    scale *= 1024;
    ++u;
  }
  if (bytes % scale == 0) return fmt::format("{} {}", bytes / scale, units[u]);
  return fmt::format("{:.2f} {}", static_cast<double>(bytes) / static_cast<double>(scale), units[u]);
}

}  // namespace ccbench
