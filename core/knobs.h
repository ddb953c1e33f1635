#pragma once
// Environment knobs: the CCBENCH_* variables of core/knob_table.h, read the same way in every
// layer. A caller names a knob (env_size(Knob::gpu_slot_bytes)); its variable, range and default
// come from the table. Unset or empty means the default; anything else must be valid: a bad value
// is Error(usage) naming the variable, the value and what is valid (never silently replaced by the
// default).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/knob_table.h"

namespace ccbench {

// What a numeric knob accepts: lo <= value <= hi and value % multiple == 0.
struct KnobRange {
  std::uint64_t lo = 0;
  std::uint64_t hi = UINT64_MAX;
  std::uint64_t multiple = 1;
};

// A size knob: bytes with the suffixes of core/size.h ("256K"); a knob bounded by another
// (KnobRow::at_most) reads that one too.
std::uint64_t env_size(Knob k);
// An integer knob: a whole decimal number.
std::int64_t env_int(Knob k);
// A choice knob: the index of its word in KnobRow::words.
std::size_t env_choice(Knob k);
// Any knob's text as set; nullopt when unset or empty (then its default applies).
std::optional<std::string> env_text(Knob k);
// A text knob with a fixed default (KnobRow::text): the text as set, else that default.
std::string env_text_or_default(Knob k);

// The run-scoped variables set in this process (KnobScope::run; set even when empty),
// "NAME=VALUE" sorted by name. They size buffers, channels and blocks that two ranks must lay out
// alike, so every rank of a run must have the same (harness/job/bootstrap.h: check_same_tuning).
// Per-process variables (CCBENCH_HOSTID, CCBENCH_FAULT, CCBENCH_TCP_IF, ...) are not among them.
std::vector<std::string> tuning_settings();

// The knob a set variable's name is a slip of: a CCBENCH_ name (any case) that is no knob but
// within kMisspeltKnobEdits edits of one (a letter left out or two swapped, or a knob's name in
// lower case);
// nullopt for a knob's own name and for names further from every knob (the scripts' and tests'
// own variables: CCBENCH_BUILD_DIR, CCBENCH_EXPECT_*).
std::optional<std::string_view> misspelt_knob(std::string_view variable);
// Every variable of this process's environment that misspelt_knob() names: Error(usage) naming
// it and the knob meant, since as set it would be ignored and the default used without a word.
void check_knob_spellings();

// The same checks on a value already read (the knob functions above use them; tests call them
// without touching the environment).
std::uint64_t knob_size(std::string_view name, std::string_view text, KnobRange valid);
std::int64_t knob_int(std::string_view name, std::string_view text, std::int64_t lo, std::int64_t hi);
std::size_t knob_choice(std::string_view name, std::string_view text, std::span<const std::string_view> valid);

// A row as the reference prints it: what it takes ("a size in bytes, a multiple of 4K from 4K to
// 16M", "one of sm, ce") and its default ("1M", "sm, or ...", "CCBENCH_ONESHOT_MAX_BYTES").
std::string knob_valid_text(const KnobRow& row);
std::string knob_default_text(const KnobRow& row);
// The default as the variable would spell it ("1M", "128", "sm"; a bound by another knob: that
// knob's default); "" where a text knob's default is computed or none.
std::string knob_default_spelling(const KnobRow& row);

}  // namespace ccbench
