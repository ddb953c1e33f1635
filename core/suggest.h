#pragma once
// "Did you mean": the known names closest to a mistyped one, for every message that refuses a
// name (flags, subcommands, collectives, data types, transports, implementations, rule keys and
// rule values). Pure; no I/O.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

// Optimal string alignment distance, case ignored: Levenshtein plus the swap of two neighbouring
// letters, the commonest typing slip ("allraduce", "alrleduce").
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidates within a small edit distance of `typed` (insertions, deletions, substitutions
// and swaps of two neighbours, case ignored), closest first, at most three. A candidate is close
// when the distance is at most a third of the longer name's length (at least 1), or when one
// name starts with the other ("--iter" for "--iters"). Empty when none is close.
std::vector<std::string> closest_names(std::string_view typed, const std::vector<std::string>& candidates);

// " (did you mean 'a'?)" or " (did you mean 'a' or 'b'?)", or "" when no candidate is close: to
// append to a message that already says what is valid.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace ccbench
