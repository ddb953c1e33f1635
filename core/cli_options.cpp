#include "core/cli_options.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/size.h"
#include "core/suggest.h"

namespace ccbench::cli {

namespace {

constexpr const char* kSizeValid = "bytes; K, M, G, T = powers of 1024";

// A plain decimal whole number from lo to hi, or nothing ("010" is ten; no sign, no blanks).
template <typename Int>
std::optional<Int> whole_in(const std::string& text, Int lo, Int hi) {
  Int v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

template <typename Int>
Int parse_whole(const std::string& text, const std::string& label, Int lo, Int hi, const std::string& meaning) {
  const auto v = whole_in(text, lo, hi);
  if (!v)
    fail(ExitCode::usage, "{}: '{}' is not valid; expected a whole number from {} to {} ({})", label, text, lo, hi,
         meaning);
  return *v;
}

std::string table_cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// `--iters`, `-n`: the names of an option as a reference cell.
std::string names_cell(const Declared& d) {
  std::string out;
  for (const std::string& n : split_list(d.names)) out += (out.empty() ? "" : ", ") + ("`" + n + "`");
  return out;
}

}  // namespace

bool Range::contains(double x) const { return (lo_open ? x > lo : x >= lo) && (hi_open ? x < hi : x <= hi); }

std::string Range::text() const {
  std::string low, high;
  if (std::isfinite(lo)) low = fmt::format("{} {:g}", lo_open ? "above" : "from", lo);
  if (std::isfinite(hi)) {
    if (!lo_open && !low.empty()) high = fmt::format("to {}{:g}", hi_open ? "below " : "", hi);
    else high = fmt::format("{}{} {:g}", low.empty() ? "" : "and ", hi_open ? "below" : "at most", hi);
  }
  std::string s = what;
  for (const std::string& part : {low, high})
    if (!part.empty()) s += (s.empty() ? "" : " ") + part;
  return s;
}

std::string flag_label(const std::string& names) {
  std::string shortest, longest;
  for (const std::string& n : split_list(names)) {
    if (n.rfind("--", 0) == 0) {
      if (longest.empty()) longest = n;
    } else if (n.rfind('-', 0) == 0) {
      if (shortest.empty()) shortest = n;
    } else {
      return n;  // a positional argument
    }
  }
  if (shortest.empty()) return longest;
  return longest.empty() ? shortest : shortest + "/" + longest;
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& x : items) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(std::remove_if(item.begin(), item.end(), [](unsigned char c) { return std::isspace(c); }), item.end());
    out.push_back(item);
  }
  if (!text.empty() && text.back() == ',') out.emplace_back();  // "a," has an empty last item
  return out;
}

void unknown_name(const std::string& label, const std::string& value, const std::vector<std::string>& names,
                  const std::string& valid_suffix) {
  fail(ExitCode::usage, "{}: unknown value '{}' (valid: {}{}){}", label, value, joined(names), valid_suffix,
       did_you_mean(value, names));
}

long long parse_whole_number(const std::string& text, const std::string& label, long long lo, long long hi,
                             const std::string& meaning) {
  return parse_whole<long long>(text, label, lo, hi, meaning);
}

void fail_empty_list(const std::string& label, const std::string& valid) {
  fail(ExitCode::usage, "{}: empty list (valid: {})", label, valid);
}

// ----------------------------------------------------------------------------------------------
// Declaring

Declared OptionSet::record(const Spec& spec, std::string type, std::string valid, std::string default_text) {
  Declared d;
  d.names = spec.names;
  d.label = flag_label(spec.names);
  d.type = std::move(type);
  d.valid = std::move(valid);
  d.default_text = spec.default_text.empty() ? std::move(default_text) : spec.default_text;
  d.help = spec.help;
  d.nccl_tests = spec.nccl_tests;
  d.group = group_;
  return d;
}

CLI::Option* OptionSet::finish(CLI::Option* opt, Declared d) {
  std::string description = d.help;
  if (!d.valid.empty()) description += " (" + d.valid + ")";
  if (!d.default_text.empty()) description += " [" + d.default_text + "]";
  opt->description(description);
  if (!d.type.empty()) opt->type_name(d.type);
  if (!d.group.empty()) opt->group(d.group);
  declared_.push_back(std::move(d));
  return opt;
}

CLI::Option* OptionSet::flag(const Spec& spec, bool& target) {
  return finish(app_.add_flag(spec.names, target), record(spec, "", "", ""));
}

CLI::Option* OptionSet::value(const Spec& spec, std::string type, std::string valid, std::string default_text,
                              std::function<void(const std::string&)> parse) {
  return add_value(spec, std::move(type), std::move(valid), std::move(default_text), std::move(parse), true);
}

CLI::Option* OptionSet::repeatable(const Spec& spec, std::string type, std::string valid, std::string default_text,
                                   std::function<void(const std::string&)> parse) {
  return add_value(spec, std::move(type), std::move(valid), std::move(default_text), std::move(parse), false);
}

CLI::Option* OptionSet::add_value(const Spec& spec, std::string type, std::string valid, std::string default_text,
                                  std::function<void(const std::string&)> parse, bool once) {
  Declared d = record(spec, std::move(type), std::move(valid), std::move(default_text));
  const std::string label = d.label;
  CLI::Option* opt = app_.add_option(
      spec.names,
      [parse, once, label](const CLI::results_t& values) {
        if (once && values.size() > 1)
          fail(ExitCode::usage, "{}: given {} times ('{}'); give it once", label, values.size(),
               fmt::join(values, "', '"));
        for (const std::string& v : values) parse(v);
        return true;
      },
      "", false);
  // Every value reaches the callback, which refuses a repeated single option in its own words.
  if (spec.names.rfind('-', 0) == 0) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return finish(opt, std::move(d));
}

CLI::Option* OptionSet::integer(const Spec& spec, int& target, int lo, int hi, std::string meaning) {
  const std::string label = flag_label(spec.names);
  return value(spec, "INT", fmt::format("{} to {}", lo, hi), std::to_string(target),
               [&target, label, lo, hi, meaning](const std::string& v) {
                 target = parse_whole<int>(v, label, lo, hi, meaning);
               });
}

CLI::Option* OptionSet::integer(const Spec& spec, std::uint64_t& target, std::uint64_t lo, std::uint64_t hi,
                                std::string meaning) {
  const std::string label = flag_label(spec.names);
  return value(spec, "INT", fmt::format("{} to {}", lo, hi), std::to_string(target),
               [&target, label, lo, hi, meaning](const std::string& v) {
                 target = parse_whole<std::uint64_t>(v, label, lo, hi, meaning);
               });
}

CLI::Option* OptionSet::number(const Spec& spec, double& target, const Range& range, std::string type) {
  const std::string label = flag_label(spec.names);
  return value(spec, std::move(type), range.text(), fmt::format("{:g}", target),
               [&target, label, range](const std::string& v) {
                 double x = 0;
                 auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
                 if (v.empty() || ec != std::errc() || end != v.data() + v.size() || !std::isfinite(x))
                   fail(ExitCode::usage, "{}: '{}' is not a number; expected {}", label, v, range.text());
                 if (!range.contains(x))
                   fail(ExitCode::usage, "{}: '{}' is not valid; expected {}{}", label, v, range.text(),
                        range.why.empty() ? "" : " (" + range.why + ")");
                 target = x;
               });
}

CLI::Option* OptionSet::size(const Spec& spec, std::uint64_t& target, std::uint64_t lo) {
  const std::string label = flag_label(spec.names);
  return value(spec, "SIZE", kSizeValid, target ? format_size(target) : "", [&target, label, lo](const std::string& v) {
    const std::uint64_t bytes = parse_size(v, label);
    if (bytes < lo)
      fail(ExitCode::usage, "{}: '{}' is too small: the size must be at least {} byte{}", label, v, lo,
           lo == 1 ? "" : "s");
    target = bytes;
  });
}

CLI::Option* OptionSet::choice(const Spec& spec, std::string& target, const std::vector<std::string>& choices) {
  const std::string label = flag_label(spec.names);
  return value(spec, "NAME", joined(choices), target, [&target, label, choices](const std::string& v) {
    if (std::find(choices.begin(), choices.end(), v) == choices.end()) unknown_name(label, v, choices);
    target = v;
  });
}

CLI::Option* OptionSet::text(const Spec& spec, std::string& target, std::string type, std::string valid) {
  return value(spec, std::move(type), std::move(valid), target, [&target](const std::string& v) { target = v; });
}

CLI::Option* OptionSet::texts(const Spec& spec, std::vector<std::string>& target, std::string type, int min, int max) {
  CLI::Option* opt = add_value(
      spec, std::move(type), "", "", [&target](const std::string& v) { target.push_back(v); }, false);
  return opt->expected(min, max)->allow_extra_args(max != 1);
}

// ----------------------------------------------------------------------------------------------
// The reference

std::string reference_table(const OptionSet& set) {
  std::string out, group = "\x01";
  for (const Declared& d : set.declared()) {
    if (d.group != group) {
      group = d.group;
      if (!group.empty()) out += fmt::format("\n*{}*\n", group);
      out += "\n| Option | Type | Valid values | Default | Meaning |\n|---|---|---|---|---|\n";
    }
    out += fmt::format("| {} | {} | {} | {} | {} |\n", names_cell(d), d.type.empty() ? "switch" : d.type,
                       table_cell(d.valid), table_cell(d.default_text), table_cell(d.help));
  }
  return out;
}

std::string nccl_tests_table(const std::vector<const OptionSet*>& sets) {
  std::string out = "| nccl-tests flag | What ccbench does with it |\n|---|---|\n";
  std::vector<std::string> seen;
  for (const OptionSet* set : sets)
    for (const Declared& d : set->declared()) {
      if (d.nccl_tests.empty() || std::find(seen.begin(), seen.end(), d.label) != seen.end()) continue;
      seen.push_back(d.label);
      out += fmt::format("| {} | {} |\n", names_cell(d), table_cell(d.nccl_tests));
    }
  return out;
}

namespace {

void collect_names(const CLI::App& app, const std::string& command, std::string& out) {
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& n : opt->get_snames()) out += command + " -" + n + "\n";
    for (const std::string& n : opt->get_lnames()) out += command + " --" + n + "\n";
    if (opt->get_snames().empty() && opt->get_lnames().empty()) out += command + " " + opt->get_name() + "\n";
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    collect_names(*sub, sub->get_name(), out);
}

}  // namespace

std::string option_names(const CLI::App& app) {
  std::string out;
  collect_names(app, app.get_name(), out);
  return out;
}

}  // namespace ccbench::cli
