// libFuzzer target: the size parser (core/size.h) and the size sweep (harness/engine/sizes.h). The input is up to three
// lines: the smallest size, the largest size, and a factor (a number with a '.') or an increment.
// Properties: bad text is Error(usage) naming the flag; a parsed size formats back to itself; a
// sweep that is accepted starts at -b, rises strictly, ends at or below -e and has <= 10000 sizes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "harness/engine/sizes.h"  // the sweep; the size parser is core/size.h
#include "tests/fuzz/fuzz_check.h"

using namespace ccbench;
using fuzz::require;

namespace {

// Parses one size; nullopt-like flag on a usage error.
bool size_of(std::string_view text, std::uint64_t& out) {
  try {
    out = parse_size(text, "-b/--minbytes");
  } catch (const Error& e) {
    fuzz::require_usage(e);
    require(std::string_view(e.what()).find("-b/--minbytes") != std::string_view::npos, "the message names no flag");
    return false;
  }
  require(parse_size(format_size(out), "x") == out, "format_size does not parse back to the same size");
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string_view lines[3];
  for (auto& l : lines) {
    auto nl = text.find('\n');
    l = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  SweepSpec spec;
  if (!size_of(lines[0], spec.min_bytes)) return 0;
  if (lines[1].empty() || !size_of(lines[1], spec.max_bytes)) return 0;
  if (lines[2].find('.') != std::string_view::npos) {
    spec.factor = std::strtod(std::string(lines[2]).c_str(), nullptr);
  } else if (!lines[2].empty() && !size_of(lines[2], spec.increment)) {
    return 0;
  }
  try {
    auto sizes = sweep_sizes(spec);
    require(!sizes.empty() && sizes.size() <= 10000, "a sweep with no or more than 10000 sizes");
    require(sizes.front() == spec.min_bytes, "the sweep does not start at -b");
    require(sizes.back() <= spec.max_bytes, "the sweep goes past -e");
    for (std::size_t i = 1; i < sizes.size(); ++i) require(sizes[i] > sizes[i - 1], "the sweep does not rise");
  } catch (const Error& e) {
    fuzz::require_usage(e);
  }
  return 0;
}
