// core/: the one size parser and the environment-knob reader. Valid values parse to what the
// user means; every bad one is Error(usage) whose message names the variable, the bad value and
// what is valid.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/knobs.h"
#include "core/size.h"
#include "golden.h"
#include "usage_error.h"

namespace ccbench {
namespace {

void expect_has(const std::string& message, const std::string& text) {
  EXPECT_NE(message.find(text), std::string::npos) << "'" << text << "' not in: " << message;
}

// The forms flags and knobs share (test_cli.cpp has the flag forms); the largest size that fits.
TEST(CoreSize, SuffixesArePowersOf1024) {
  const std::pair<const char*, std::uint64_t> cases[] = {
      {"8B", 8}, {"1m", 1u << 20}, {"1MiB", 1u << 20}, {"256kb", 256u << 10}, {"16777215T", 16777215ull << 40}};
  for (const auto& [text, bytes] : cases) EXPECT_EQ(parse_size(text, "X"), bytes) << text;
}

TEST(CoreSize, BadTextNamesWhatAndWhy) {
  expect_has(usage_error([] { parse_size("", "VAR"); }), "VAR: empty size");
  expect_has(usage_error([] { parse_size("-1K", "VAR"); }), "VAR: negative size '-1K'");
  expect_has(usage_error([] { parse_size("1.5M", "VAR"); }), "VAR: fractional size '1.5M'");
  expect_has(usage_error([] { parse_size("4Q", "VAR"); }), "VAR: unknown size suffix 'Q' in '4Q'");
  expect_has(usage_error([] { parse_size("abc", "VAR"); }), "VAR: 'abc' is not a size");
  expect_has(usage_error([] { parse_size("16777216T", "VAR"); }), "does not fit in 64 bits");
  expect_has(usage_error([] { parse_size("99999999999999999999", "VAR"); }), "does not fit in 64 bits");
}

TEST(CoreSize, FormatReadsBack) {
  for (std::uint64_t v : {0ull, 1ull, 1000ull, 1024ull, 3ull << 20, (1ull << 40) + 1024, 5ull << 40})
    EXPECT_EQ(parse_size(format_size(v), "X"), v) << format_size(v);
  EXPECT_EQ(format_size(256 << 10), "256K");
  EXPECT_EQ(format_size(1000), "1000");
}

// Both spellings of sizes exact and not, small and at the top of the range, one line each
// ("bytes<TAB>format_size<TAB>human_size"): tests/sizes_check.py holds scripts/sizes.py to this file.
TEST(CoreSize, SpellingsGolden) {
  std::string out;
  for (std::uint64_t v : {0ull, 1ull, 8ull, 1000ull, 1023ull, 1024ull, 1025ull, 1536ull, 4095ull, 65536ull, 100000ull,
                          1000000ull, 1ull << 20, 1572864ull, 3ull << 20, 123456789ull, 16ull << 20, 1ull << 30,
                          4ull << 30, (1ull << 40) + 1024, 5ull << 40, 1ull << 50, 1ull << 60, ~0ull})
    out += std::to_string(v) + "\t" + format_size(v) + "\t" + human_size(v) + "\n";
  golden::expect_matches("size_spellings.txt", out);
}

constexpr KnobRange kSlot{.lo = 64, .hi = 64ull << 20, .multiple = 64};

TEST(CoreKnobs, SizeKnobAcceptsSuffixesInRange) {
  EXPECT_EQ(knob_size("CCBENCH_GPU_SLOT_BYTES", "1M", kSlot), 1u << 20);
  EXPECT_EQ(knob_size("CCBENCH_GPU_SLOT_BYTES", "256K", kSlot), 256u << 10);
  EXPECT_EQ(knob_size("CCBENCH_GPU_SLOT_BYTES", "64", kSlot), 64u);
  EXPECT_EQ(knob_size("CCBENCH_GPU_SLOT_BYTES", "64M", kSlot), 64u << 20);
}

TEST(CoreKnobs, SizeKnobOutOfRangeSaysWhatIsValid) {
  for (const char* bad : {"0", "32", "100", "65", "1G", "128M"}) {
    auto m = usage_error([&] { knob_size("CCBENCH_CPU_SLOT_BYTES", bad, kSlot); });
    expect_has(m, std::string("CCBENCH_CPU_SLOT_BYTES='") + bad + "' is invalid");
    expect_has(m, "a multiple of 64 from 64 to 64M");
  }
}

TEST(CoreKnobs, SizeKnobBadTextGivesReasonAndRange) {
  auto m = usage_error([] { knob_size("CCBENCH_CPU_SLOT_BYTES", "64Q", kSlot); });
  expect_has(m, "CCBENCH_CPU_SLOT_BYTES='64Q' is invalid (unknown size suffix 'Q'");
  expect_has(m, "a multiple of 64 from 64 to 64M");
  m = usage_error([] { knob_size("CCBENCH_CPU_SLOT_BYTES", "-64", kSlot); });
  expect_has(m, "negative size");
  expect_has(m, "powers of 1024");
}

TEST(CoreKnobs, IntKnobRange) {
  EXPECT_EQ(knob_int("CCBENCH_CPU_SLOT_DEPTH", "2", 2, 64), 2);
  EXPECT_EQ(knob_int("CCBENCH_CPU_SLOT_DEPTH", "64", 2, 64), 64);
  for (const char* bad : {"1", "65", "-2", "x", "4K", "3 ", ""}) {
    auto m = usage_error([&] { knob_int("CCBENCH_CPU_SLOT_DEPTH", bad, 2, 64); });
    expect_has(m, std::string("CCBENCH_CPU_SLOT_DEPTH='") + bad + "' is invalid");
    expect_has(m, "an integer from 2 to 64");
  }
}

}  // namespace
}  // namespace ccbench
