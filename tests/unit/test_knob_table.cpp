// core/knob_table.h read through core/knobs.h: every row's default is valid for its own row, a bad
// value of each kind is refused naming the variable and what the reference says is valid, and
// tuning_settings() is exactly the run-scoped rows that are set.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/knobs.h"
#include "core/size.h"
#include "usage_error.h"

extern char** environ;  // POSIX: the process environment

namespace ccbench {
namespace {

// Clears every CCBENCH_* variable for the test and puts the environment back afterwards.
class KnobEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (char** e = environ; e && *e; ++e) {
      const std::string kv(*e);
      if (kv.starts_with("CCBENCH_")) saved_.push_back(kv);
    }
    for (const std::string& kv : saved_) unsetenv(kv.substr(0, kv.find('=')).c_str());
  }
  void TearDown() override {
    for (const KnobRow& row : kKnobTable) unsetenv(std::string(row.name).c_str());
    unsetenv("CCBENCH_GPU_NOT_A_KNOB");
    for (const std::string& kv : saved_) {
      const auto eq = kv.find('=');
      setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
    }
  }
  static void set(const KnobRow& row, const std::string& value) {
    setenv(std::string(row.name).c_str(), value.c_str(), 1);
  }

 private:
  std::vector<std::string> saved_;
};

// Reads the knob as its callers do and returns the value as text, for any kind.
std::string read_back(const KnobRow& row) {
  switch (row.kind) {
    case KnobKind::size: return format_size(env_size(row.id));
    case KnobKind::integer: return std::to_string(env_int(row.id));
    case KnobKind::choice: return std::string(row.words[env_choice(row.id)]);
    case KnobKind::text: break;
  }
  return row.text.empty() ? env_text(row.id).value_or("") : env_text_or_default(row.id);
}

TEST_F(KnobEnvironment, EveryRowReadsItsDefaultUnsetEmptyOrSpelledOut) {
  for (const KnobRow& row : kKnobTable) {
    SCOPED_TRACE(std::string(row.name));
    const std::string spelled = knob_default_spelling(row);
    EXPECT_EQ(read_back(row), spelled) << "unset";
    set(row, "");
    EXPECT_EQ(read_back(row), spelled) << "empty";
    EXPECT_FALSE(env_text(row.id).has_value());
    if (spelled.empty()) continue;  // a text knob whose default is computed or "none"
    set(row, spelled);
    EXPECT_EQ(read_back(row), spelled) << "the default spelled out";
    EXPECT_EQ(env_text(row.id), spelled);
  }
}

TEST(KnobTable, RowsAreInKnobOrderWithTheirKindsFields) {
  for (std::size_t i = 0; i < std::size(kKnobTable); ++i) {
    const KnobRow& row = kKnobTable[i];
    EXPECT_EQ(static_cast<std::size_t>(row.id), i) << row.name;
    EXPECT_FALSE(row.what.empty()) << row.name;
    EXPECT_FALSE(row.chosen_by.empty()) << row.name << ": say the measurement, or that there is none";
    EXPECT_FALSE(knob_default_text(row).empty()) << row.name;
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(kKnobTable[j].name, row.name);
  }
}

// A value each numeric or choice row refuses: text that is no number or word, and one past the
// range where there is an edge to step past.
std::vector<std::string> bad_values(const KnobRow& row) {
  std::vector<std::string> out = {"x7"};
  if (row.kind == KnobKind::integer) out.insert(out.end(), {std::to_string(row.lo - 1), std::to_string(row.hi + 1)});
  if (row.kind == KnobKind::size && row.lo > 0) out.push_back(std::to_string(row.lo - 1));
  if (row.kind == KnobKind::size && !row.at_most && row.hi < (1ull << 40))
    out.push_back(format_size(row.hi + row.multiple));
  if (row.kind == KnobKind::size && row.multiple > 1) out.push_back(std::to_string(row.lo + 1));
  if (row.at_most) out.push_back(format_size(knob_row(*row.at_most).value + 1));
  if (row.kind == KnobKind::choice) out.push_back(std::string(row.words[0]) + " ");
  return out;
}

TEST_F(KnobEnvironment, BadValueOfEachKindNamesTheVariableAndWhatIsValid) {
  int refused = 0;
  for (const KnobRow& row : kKnobTable) {
    if (row.kind == KnobKind::text) continue;  // any text is read as given; its reader checks its meaning
    for (const std::string& bad : bad_values(row)) {
      SCOPED_TRACE(std::string(row.name) + "=" + bad);
      set(row, bad);
      const std::string m = usage_error([&] { read_back(row); });
      EXPECT_NE(m.find(std::string(row.name) + "='" + bad + "' is invalid"), std::string::npos) << m;
      // What the message calls valid is what the reference prints (a bound by another knob: its value).
      const std::string valid =
          row.at_most ? "from 0 to " + format_size(knob_row(*row.at_most).value) : knob_valid_text(row);
      EXPECT_NE(m.find(valid), std::string::npos) << m << "\n  lacks: " << valid;
      ++refused;
    }
    unsetenv(std::string(row.name).c_str());
  }
  EXPECT_GE(refused, 40);
}

TEST_F(KnobEnvironment, ABoundByAnotherKnobFollowsIt) {
  setenv("CCBENCH_ONESHOT_MAX_BYTES", "64K", 1);
  EXPECT_EQ(env_size(Knob::best_oneshot_max_bytes), 64u << 10);
  setenv("CCBENCH_BEST_ONESHOT_MAX_BYTES", "128K", 1);
  const std::string m = usage_error([] { env_size(Knob::best_oneshot_max_bytes); });
  EXPECT_NE(m.find("CCBENCH_BEST_ONESHOT_MAX_BYTES='128K' is invalid: give a size in bytes, from 0 to 64K"),
            std::string::npos)
      << m;
}

TEST(KnobTable, RunScopedNamesKeepThePrefixesTheAgreementMessageGives) {
  // harness/job/bootstrap.cpp's message names the run-scoped rows by these prefixes.
  const std::string_view prefixes[] = {"CCBENCH_GPU_", "CCBENCH_CPU_", "CCBENCH_ONESHOT_", "CCBENCH_BEST_"};
  for (const KnobRow& row : kKnobTable) {
    const bool prefixed = std::any_of(std::begin(prefixes), std::end(prefixes),
                                      [&](std::string_view p) { return row.name.starts_with(p); });
    EXPECT_EQ(prefixed, row.scope == KnobScope::run) << row.name;
  }
}

TEST_F(KnobEnvironment, TuningSettingsAreExactlyTheRunScopedRowsSet) {
  EXPECT_TRUE(tuning_settings().empty());
  std::vector<std::string> expected;
  for (const KnobRow& row : kKnobTable) {
    // Every other row, so that unset rows are seen to stay out; an empty value counts as set.
    if (static_cast<std::size_t>(row.id) % 2 == 1) continue;
    const std::string value = static_cast<std::size_t>(row.id) % 4 == 0 ? "" : knob_default_spelling(row) + "x";
    set(row, value);
    if (row.scope == KnobScope::run) expected.push_back(std::string(row.name) + "=" + value);
  }
  setenv("CCBENCH_GPU_NOT_A_KNOB", "1", 1);  // not in the table: nobody reads it
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(tuning_settings(), expected);
  EXPECT_GE(expected.size(), 8u);
}

TEST(KnobTable, ASlipOfAKnobsNameIsNamedAndOtherVariablesAreNot) {
  EXPECT_EQ(misspelt_knob("CCBENCH_GPU_SLOTBYTES"), "CCBENCH_GPU_SLOT_BYTES");  // a letter left out
  EXPECT_EQ(misspelt_knob("CCBENCH_GPU_CHANELS"), "CCBENCH_GPU_CHANNELS");
  EXPECT_EQ(misspelt_knob("ccbench_cpu_slot_depth"), "CCBENCH_CPU_SLOT_DEPTH");  // lower case
  EXPECT_EQ(misspelt_knob("CCBENCH_CPU_SLOT_DEPHT"), "CCBENCH_CPU_SLOT_DEPTH");  // two letters swapped
  for (const KnobRow& row : kKnobTable) EXPECT_FALSE(misspelt_knob(row.name)) << row.name;
  // The variables ccbench's own scripts and tests set beside it.
  for (const char* other :
       {"CCBENCH_BUILD_DIR", "CCBENCH_NP", "CCBENCH_BOX", "CCBENCH_FUZZ", "CCBENCH_EXPECT_ENERGY", "CCBENCH_GIT_HASH",
        "CCBENCH_VENV", "CCBENCH_NO_INSTALL", "CCBENCH_SOURCE_DIR", "PATH", "CCBENCH", "NCCL_PROTO"})
    EXPECT_FALSE(misspelt_knob(other)) << other;
}

TEST(KnobTable, ASetSlipEndsTheRunBeforeItStartsNamingTheKnobMeant) {
  ASSERT_EQ(setenv("CCBENCH_GPU_CHANELS", "8", 1), 0);
  try {
    check_knob_spellings();
    ADD_FAILURE() << "CCBENCH_GPU_CHANELS was not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("CCBENCH_GPU_CHANELS is set"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("did you mean CCBENCH_GPU_CHANNELS?"), std::string::npos) << e.what();
  }
  unsetenv("CCBENCH_GPU_CHANELS");
  EXPECT_NO_THROW(check_knob_spellings());
}

}  // namespace
}  // namespace ccbench
