#include "core/suggest.h"

#include <algorithm>
#include <cctype>

namespace ccbench {

namespace {

constexpr std::size_t kMaxSuggestions = 3;

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  if (prefix.size() > text.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(text[i]) != lower(prefix[i])) return false;
  return true;
}

// Letters other than the leading dashes of a flag: "--iters" has 5.
std::size_t letters(std::string_view s) {
  std::size_t dashes = 0;
  while (dashes < s.size() && s[dashes] == '-') ++dashes;
  return s.size() - dashes;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::vector<std::string> closest_names(std::string_view typed, const std::vector<std::string>& candidates) {
  if (letters(typed) == 0) return {};
  std::vector<std::pair<std::size_t, std::string>> close;
  for (const std::string& c : candidates) {
    if (c == typed || letters(c) == 0) continue;
    const std::size_t distance = edit_distance(typed, c);
    const std::size_t allowed = std::max<std::size_t>(1, std::max(letters(typed), letters(c)) / 3);
    const bool prefix = std::min(letters(typed), letters(c)) >= 3 &&
                        (starts_with_ignoring_case(c, typed) || starts_with_ignoring_case(typed, c));
    if (distance <= allowed || prefix) close.emplace_back(prefix ? std::min(distance, allowed) : distance, c);
  }
  std::stable_sort(close.begin(), close.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [distance, name] : close) {
    if (std::find(out.begin(), out.end(), name) != out.end()) continue;
    out.push_back(name);
    if (out.size() == kMaxSuggestions) break;
  }
  return out;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::vector<std::string> close = closest_names(typed, candidates);
  if (close.empty()) return "";
  std::string s = " (did you mean ";
  for (std::size_t i = 0; i < close.size(); ++i)
    s += (i == 0 ? "" : i + 1 == close.size() ? " or " : ", ") + ("'" + close[i] + "'");
  return s + "?)";
}

}  // namespace ccbench
