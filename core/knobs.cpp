#include "core/knobs.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

extern char** environ;  // POSIX: the process's environment

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/size.h"
#include "core/suggest.h"

namespace ccbench {

namespace {

// The table's promises, checked when core builds: rows in Knob's order, every fixed default valid
// for its own row, a choice's default one of its words, numbers only where a number is read.
constexpr bool row_is_consistent(const KnobRow& r, std::size_t index) {
  if (static_cast<std::size_t>(r.id) != index || r.name.substr(0, 8) != "CCBENCH_") return false;
  const bool numeric = r.kind == KnobKind::size || r.kind == KnobKind::integer;
  if (!numeric && (r.lo != 0 || r.hi != UINT64_MAX || r.multiple != 1 || r.at_most)) return false;
  if ((r.kind == KnobKind::choice) != !r.words.empty() || (r.kind == KnobKind::text) == r.form.empty()) return false;
  if (r.kind != KnobKind::text && !r.text.empty()) return false;
  if (r.kind == KnobKind::choice) return r.value < r.words.size();
  if (r.kind == KnobKind::integer && r.hi > static_cast<std::uint64_t>(INT64_MAX)) return false;
  if (!numeric || r.at_most) return !r.at_most || kKnobTable[static_cast<std::size_t>(*r.at_most)].kind == r.kind;
  return r.multiple > 0 && r.lo <= r.value && r.value <= r.hi && r.value % r.multiple == 0;
}

constexpr bool table_is_consistent() {
  for (std::size_t i = 0; i < std::size(kKnobTable); ++i)
    if (!row_is_consistent(kKnobTable[i], i)) return false;
  return true;
}
static_assert(table_is_consistent(), "core/knob_table.h: a row is out of order or its default is not valid for it");

constexpr const char* kSuffixNote = "K, M, G and T are powers of 1024";

// "a multiple of 64 from 64 to 64M", "from 1 to 1G", "from 0 up".
std::string size_range_text(const KnobRange& r) {
  std::string text = "from " + format_size(r.lo) + (r.hi == UINT64_MAX ? " up" : " to " + format_size(r.hi));
  return r.multiple > 1 ? "a multiple of " + format_size(r.multiple) + " " + text : text;
}

KnobRange range_of(const KnobRow& r) { return {r.lo, r.hi, r.multiple}; }

}  // namespace

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

std::size_t knob_choice(std::string_view name, std::string_view text, std::span<const std::string_view> valid) {
  const auto it = std::find(valid.begin(), valid.end(), text);
  if (it == valid.end())
    fail(ExitCode::usage, "{}='{}' is invalid: give one of {}", name, text, fmt::join(valid, ", "));
  return static_cast<std::size_t>(it - valid.begin());
}

std::optional<std::string> env_text(Knob k) {
  const char* v = std::getenv(std::string(knob_row(k).name).c_str());
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::string env_text_or_default(Knob k) { return env_text(k).value_or(std::string(knob_row(k).text)); }

std::uint64_t env_size(Knob k) {
  const KnobRow& row = knob_row(k);
  KnobRange valid = range_of(row);
  std::uint64_t fallback = row.value;
  if (row.at_most) valid.hi = fallback = env_size(*row.at_most);
  const auto text = env_text(k);
  return text ? knob_size(row.name, *text, valid) : fallback;
}

std::int64_t env_int(Knob k) {
  const KnobRow& row = knob_row(k);
  const auto text = env_text(k);
  return text ? knob_int(row.name, *text, static_cast<std::int64_t>(row.lo), static_cast<std::int64_t>(row.hi))
              : static_cast<std::int64_t>(row.value);
}

std::size_t env_choice(Knob k) {
  const KnobRow& row = knob_row(k);
  const auto text = env_text(k);
  return text ? knob_choice(row.name, *text, row.words) : static_cast<std::size_t>(row.value);
}

// A name this many edits from a knob (case ignored) is taken for a slip of it, if also within a
// quarter of the knob's name after CCBENCH_. Every CCBENCH_ variable that ccbench's scripts and
// tests set (CCBENCH_BUILD_DIR, CCBENCH_NP, CCBENCH_FUZZ, CCBENCH_EXPECT_*, ...) is 3 or more
// edits from every knob, so none of them is refused; CCBENCH_NP is 2 from CCBENCH_DB, and the
// quarter keeps short names apart.
constexpr std::size_t kMisspeltKnobEdits = 2;
constexpr std::string_view kKnobPrefix = "CCBENCH_";

std::optional<std::string_view> misspelt_knob(std::string_view variable) {
  if (variable.size() < kKnobPrefix.size() || edit_distance(variable.substr(0, kKnobPrefix.size()), kKnobPrefix) != 0)
    return std::nullopt;
  std::optional<std::string_view> closest;
  std::size_t best = kMisspeltKnobEdits + 1;
  for (const KnobRow& row : kKnobTable) {
    if (row.name == variable) return std::nullopt;
    const std::size_t d = edit_distance(variable, row.name);
    if (d < best && d * 4 <= row.name.size() - kKnobPrefix.size()) best = d, closest = row.name;
  }
  return closest;
}

void check_knob_spellings() {
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::string_view variable = entry.substr(0, entry.find('='));
    if (const auto knob = misspelt_knob(variable))
      fail(ExitCode::usage,
           "{} is set, but ccbench has no such variable: did you mean {}? (as set it would be ignored and the "
           "default used; `ccbench help --environment` lists every variable)",
           variable, *knob);
  }
}

std::vector<std::string> tuning_settings() {
  std::vector<std::string> out;
  for (const KnobRow& row : kKnobTable) {
    if (row.scope != KnobScope::run) continue;
    if (const char* v = std::getenv(std::string(row.name).c_str())) out.push_back(fmt::format("{}={}", row.name, v));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string knob_valid_text(const KnobRow& row) {
  switch (row.kind) {
    case KnobKind::size:
      if (row.at_most) return fmt::format("a size in bytes, from {} to {}", row.lo, knob_row(*row.at_most).name);
      return "a size in bytes, " + size_range_text(range_of(row));
    case KnobKind::integer: return fmt::format("an integer from {} to {}", row.lo, row.hi);
    case KnobKind::choice: return fmt::format("one of {}", fmt::join(row.words, ", "));
    case KnobKind::text: break;
  }
  return std::string(row.form);
}

std::string knob_default_text(const KnobRow& row) {
  if (!row.unset.empty()) return std::string(row.unset);
  return row.at_most ? std::string(knob_row(*row.at_most).name) : knob_default_spelling(row);
}

std::string knob_default_spelling(const KnobRow& row) {
  if (row.at_most) return knob_default_spelling(knob_row(*row.at_most));
  switch (row.kind) {
    case KnobKind::size: return format_size(row.value);
    case KnobKind::integer: return std::to_string(row.value);
    case KnobKind::choice: return std::string(row.words[row.value]);
    case KnobKind::text: break;
  }
  return std::string(row.text);
}

}  // namespace ccbench
