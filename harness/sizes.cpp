#include "harness/sizes.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "results/error.h"

namespace ccbench {

namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
constexpr const char* kSizeHelp = "a whole number of bytes with an optional suffix K, M, G or T (powers of 1024)";

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view flag) {
  if (text.empty()) fail(ExitCode::usage, "{}: empty size; expected {}", flag, kSizeHelp);
  if (text.front() == '-') fail(ExitCode::usage, "{}: negative size '{}'; expected {}", flag, text, kSizeHelp);
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range)
    fail(ExitCode::usage, "{}: size '{}' does not fit in 64 bits", flag, text);
  if (ec != std::errc() || end == text.data())
    fail(ExitCode::usage, "{}: '{}' is not a size; expected {}", flag, text, kSizeHelp);
  std::string suffix(end, text.data() + text.size());
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB") shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB") shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB") shift = 30;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB") shift = 40;
  else if (suffix[0] == '.') fail(ExitCode::usage, "{}: fractional size '{}'; expected {}", flag, text, kSizeHelp);
  else fail(ExitCode::usage, "{}: unknown size suffix '{}' in '{}'; expected {}", flag, std::string(end, text.data() + text.size()), text, kSizeHelp);
  if (shift && value > (kMax >> shift)) fail(ExitCode::usage, "{}: size '{}' does not fit in 64 bits", flag, text);
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
    if (sizes.size() > 10000)
      fail(ExitCode::usage, "the sweep from {} to {} has more than 10000 sizes; use a larger -f or -i",
           format_size(s.min_bytes), format_size(s.max_bytes));
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
  return sizes;
}

}  // namespace ccbench
