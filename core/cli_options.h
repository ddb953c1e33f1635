#pragma once
// The option layer: every command-line option of ccbench is declared once, through it, on
// CLI11: its names, its type, the values it takes (a range or a list of choices), its default,
// its help and, for nccl-tests' flags, what ccbench does with them. From these declarations
// come
//   parsing   each value checked as it is read; bad input is Error(usage) naming the flag as
//             users type it ("-n/--iters"), the value given and what is valid, with "did you
//             mean" for names;
//   --help    every option with its type, its valid values and its default;
//   reference the generated docs/reference.md (reference_table, nccl_tests_table).
//
// Use: one OptionSet per (sub)command; each adder binds an option to the variable it sets, and
// the variable's value when the option is declared is the default shown, unless the Spec gives
// the default in words. A flag shared by subcommands is declared by one function that each of
// them calls, so that it means the same everywhere. Checks spanning several options belong to
// the command, after parsing. Not thread-safe; the OptionSet and the bound variables must outlive
// the parse.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace ccbench::cli {

// What a declaration says about an option, besides what it binds.
struct Spec {
  std::string names;              // CLI11's form: "-n,--iters"; a positional argument has no dash
  std::string help;               // what it does, without its type, valid values or default
  std::string default_text = {};  // the default in words instead of the bound value's
  std::string nccl_tests = {};    // an nccl-tests flag: what ccbench does with it ("" = not one)
};

// What --help and the reference show of one option.
struct Declared {
  std::string names;         // "-n,--iters"
  std::string label;         // as messages name it: "-n/--iters"
  std::string type;          // INT, NUMBER, SECONDS, SIZE, NAME, LIST, PATH ...; "" for a switch
  std::string valid;         // "1 to 1000000", "auto, cpu, gpu"; "" when any value goes
  std::string default_text;  // "" when there is none
  std::string help;
  std::string nccl_tests;
  std::string group;  // the heading it is listed under ("" = the command's options)
};

// A range of real numbers, and what they are in words ("seconds", "a fraction").
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  std::string what = {};
  bool lo_open = false;  // lo < x rather than lo <= x
  bool hi_open = false;
  std::string why = {};  // what a value outside does, for messages ("1 or less never advances the sweep")
  bool contains(double x) const;
  std::string text() const;  // "seconds from 0.01 to 3600", "a fraction from 0 to below 1", "a factor above 1"
};

// A vocabulary of names: for choices and comma-separated lists.
template <typename T>
struct Names {
  std::vector<std::pair<std::string, T>> canonical;         // in the order listed; names shown
  std::function<std::optional<T>(std::string_view)> parse;  // also aliases; null: canonical only
};

// "-n,--iters" -> "-n/--iters": the first short and the first long name.
std::string flag_label(const std::string& names);
// "a, b, c".
std::string joined(const std::vector<std::string>& items);
// The items of a comma-separated list, blanks removed ("a,,b" has an empty item; "" has none).
std::vector<std::string> split_list(const std::string& text);

class OptionSet {
 public:
  explicit OptionSet(CLI::App& app) : app_(app) {}
  OptionSet(const OptionSet&) = delete;
  OptionSet& operator=(const OptionSet&) = delete;

  CLI::App& app() const { return app_; }
  // Options declared from now on are listed under `heading` ("" = the command's own options).
  void group(std::string heading) { group_ = std::move(heading); }

  // A switch (no value).
  CLI::Option* flag(const Spec& spec, bool& target);
  // A whole number in decimal (never octal: "010" is 10) from lo to hi; `meaning` says what it
  // counts in messages ("the number of timed iterations").
  CLI::Option* integer(const Spec& spec, int& target, int lo, int hi, std::string meaning);
  CLI::Option* integer(const Spec& spec, std::uint64_t& target, std::uint64_t lo, std::uint64_t hi,
                       std::string meaning);
  // A finite real number within `range`; `type` is the type name shown (NUMBER, SECONDS, FRACTION).
  CLI::Option* number(const Spec& spec, double& target, const Range& range, std::string type = "NUMBER");
  // Bytes with an optional K, M, G or T (powers of 1024), at least `lo`.
  CLI::Option* size(const Spec& spec, std::uint64_t& target, std::uint64_t lo = 0);
  // One of `choices`.
  CLI::Option* choice(const Spec& spec, std::string& target, const std::vector<std::string>& choices);
  template <typename T>
  CLI::Option* choice(const Spec& spec, T& target, const Names<T>& names);
  // Names separated by commas, or `all`; each parsed by `names`; repeats dropped.
  template <typename T>
  CLI::Option* list(const Spec& spec, std::vector<T>& target, const Names<T>& names, bool all_allowed = true);
  // Free text: a path, a file, a topology ...; `type` is the type name shown.
  CLI::Option* text(const Spec& spec, std::string& target, std::string type, std::string valid = "");
  // Free text: min..max values (max -1: any number) each time it is given; an option may be given
  // several times (--pair A --pair B).
  CLI::Option* texts(const Spec& spec, std::vector<std::string>& target, std::string type, int min = 1, int max = -1);
  // Any other value: `parse` reads it (and throws Error(usage)); type, valid and the default as
  // they are to be shown. Like every single option here, given twice it is a usage error naming
  // both values (never the last silently winning).
  CLI::Option* value(const Spec& spec, std::string type, std::string valid, std::string default_text,
                     std::function<void(const std::string&)> parse);
  // As `value`, for an option that may be given several times: `parse` sees each value in order.
  CLI::Option* repeatable(const Spec& spec, std::string type, std::string valid, std::string default_text,
                          std::function<void(const std::string&)> parse);

  const std::vector<Declared>& declared() const { return declared_; }

 private:
  Declared record(const Spec& spec, std::string type, std::string valid, std::string default_text);
  CLI::Option* finish(CLI::Option* opt, Declared d);
  // `value`; `once`: a named option given more than once is a usage error saying so.
  CLI::Option* add_value(const Spec& spec, std::string type, std::string valid, std::string default_text,
                         std::function<void(const std::string&)> parse, bool once);

  CLI::App& app_;
  std::string group_;
  std::vector<Declared> declared_;
};

// Error(usage) for `value` of `label` not among `names`: "LABEL: unknown value 'V' (valid: ...)"
// with the closest names.
[[noreturn]] void unknown_name(const std::string& label, const std::string& value,
                               const std::vector<std::string>& names, const std::string& valid_suffix = "");

// A plain decimal whole number from lo to hi ("010" is ten; no sign, no blanks), or Error(usage):
// "LABEL: 'TEXT' is not valid; expected a whole number from LO to HI (MEANING)".
long long parse_whole_number(const std::string& text, const std::string& label, long long lo, long long hi,
                             const std::string& meaning);

// Error(usage): "LABEL: empty list (valid: ...)".
[[noreturn]] void fail_empty_list(const std::string& label, const std::string& valid);

// The options of `set` as Markdown tables (one per group): | option | type | valid | default | meaning |.
std::string reference_table(const OptionSet& set);
// nccl-tests' flags declared in `sets`: | nccl-tests | ccbench | here |.
std::string nccl_tests_table(const std::vector<const OptionSet*>& sets);
// Every name of every option of `app` and its subcommands, one "SUBCOMMAND NAME" per line, as
// CLI11 holds them (not as declared): what the reference's check compares with.
std::string option_names(const CLI::App& app);

// ----------------------------------------------------------------------------------------------
// Templates

template <typename T>
CLI::Option* OptionSet::choice(const Spec& spec, T& target, const Names<T>& names) {
  std::vector<std::string> shown;
  std::string now;
  for (const auto& [n, v] : names.canonical) {
    shown.push_back(n);
    if (v == target && now.empty()) now = n;
  }
  const std::string label = flag_label(spec.names);
  return value(spec, "NAME", joined(shown), now, [&target, names, shown, label](const std::string& v) {
    for (const auto& [n, x] : names.canonical)
      if (n == v) {
        target = x;
        return;
      }
    if (names.parse)
      if (auto x = names.parse(v)) {
        target = *x;
        return;
      }
    unknown_name(label, v, shown);
  });
}

template <typename T>
CLI::Option* OptionSet::list(const Spec& spec, std::vector<T>& target, const Names<T>& names, bool all_allowed) {
  std::vector<std::string> shown, now;
  for (const auto& [n, v] : names.canonical) {
    shown.push_back(n);
    for (const T& t : target)
      if (t == v && std::find(now.begin(), now.end(), n) == now.end()) now.push_back(n);
  }
  const std::string label = flag_label(spec.names);
  const std::string suffix = all_allowed ? ", or all" : "";
  std::string now_text;
  for (const std::string& n : now) now_text += (now_text.empty() ? "" : ",") + n;
  return value(spec, "LIST", joined(shown) + suffix, now_text,
               [&target, names, shown, label, suffix, all_allowed](const std::string& text) {
                 std::vector<T> out;
                 if (text.empty()) fail_empty_list(label, joined(shown) + suffix);
                 if (all_allowed && text == "all") {
                   for (const auto& [n, v] : names.canonical) out.push_back(v);
                   target = out;
                   return;
                 }
                 for (const std::string& item : split_list(text)) {
                   std::optional<T> v;
                   for (const auto& [n, x] : names.canonical)
                     if (n == item) v = x;
                   if (!v && names.parse) v = names.parse(item);
                   if (!v) unknown_name(label, item, shown, suffix);
                   if (std::find(out.begin(), out.end(), *v) == out.end()) out.push_back(*v);
                 }
                 target = out;
               });
}

}  // namespace ccbench::cli
