#include "results/accept.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/suggest.h"
#include "results/compare.h"
#include "results/format.h"

namespace ccbench {

namespace {

// ---------------------------------------------------------------------------------------------
// Reading the rules
// ---------------------------------------------------------------------------------------------

const std::vector<std::string> kTopKeys = {"rules"};
const std::vector<std::string> kRuleKeys = {"name", "select", "require"};
const std::vector<std::string> kSelectKeys = {"collective", "impl",  "transport", "dtype",   "op",
                                              "mode",       "group", "min_size",  "max_size"};

// A requirement key, its member and what its value means.
struct LimitKey {
  const char* key;
  std::optional<double> Requirement::*member;
  const char* meaning;
};
const std::vector<LimitKey> kLimitKeys = {
    {"min_busbw", &Requirement::min_busbw_gbps, "GB/s"},
    {"min_busbw_fraction_of_ceiling", &Requirement::min_fraction_of_ceiling, "a fraction of the link ceiling"},
    {"min_busbw_fraction_of_prediction", &Requirement::min_fraction_of_prediction, "a fraction of the prediction"},
    {"max_latency_us", &Requirement::max_latency_us, "microseconds"},
    {"max_time_cv", &Requirement::max_time_cv, "a coefficient of variation"},
    {"max_p95_over_median", &Requirement::max_p95_over_median, "a ratio >= 1"},
    {"max_wrong", &Requirement::max_wrong, "wrong elements"},
    {"max_straggler_ratio", &Requirement::max_straggler_ratio, "slowest rank / median rank"},
    {"max_group_outlier_ratio", &Requirement::max_group_outlier_ratio, "slowest group / median group"},
    {"max_temperature_c", &Requirement::max_temperature_c, "degrees Celsius"},
    {"max_throttle_events", &Requirement::max_throttle_events, "events"},
    {"max_error_counter_growth", &Requirement::max_error_counter_growth, "counts"},
    {"max_energy_j", &Requirement::max_energy_j, "joules per collective (--energy)"},
    {"min_gb_per_joule", &Requirement::min_gb_per_joule, "GB moved per joule (--energy)"},
};

// Throws the usage error for `node` of `file`: "FILE:LINE:COLUMN: message".
template <typename... Args>
[[noreturn]] void bad(const std::string& file, const YAML::Node& node, fmt::format_string<Args...> f, Args&&... args) {
  const YAML::Mark m = node.Mark();
  fail(ExitCode::usage, "{}:{}:{}: {}", file, m.line + 1, m.column + 1, fmt::format(f, std::forward<Args>(args)...));
}

// Unknown keys, and a key given twice (YAML parsers keep one of the two values silently).
void check_keys(const std::string& file, const YAML::Node& map, const std::vector<std::string>& valid,
                const char* what) {
  if (!map.IsMap()) bad(file, map, "{} must be a mapping of keys ({})", what, fmt::join(valid, ", "));
  std::map<std::string, int> first_line;
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(valid.begin(), valid.end(), key) == valid.end())
      bad(file, kv.first, "unknown key '{}' in {} (valid: {}){}", key, what, fmt::join(valid, ", "),
          did_you_mean(key, valid));
    const auto [it, fresh] = first_line.emplace(key, kv.first.Mark().line + 1);
    if (!fresh)
      bad(file, kv.first,
          "'{}' is given twice in {} (first at line {}); give each key once, with every limit or "
          "value under it",
          key, what, it->second);
  }
}

// A `select` value as rows spell it; a usage error when `known` knows the key and not the value.
std::string known_value(const std::string& file, const YAML::Node& n, const std::string& key,
                        const SelectVocabulary& known) {
  const std::string v = n.as<std::string>();
  const auto k = known.keys.find(key);
  if (k == known.keys.end()) return v;
  const auto& names = k->second.names;
  std::optional<std::string> row = k->second.canonical ? k->second.canonical(v) : std::nullopt;
  if (!k->second.canonical && std::find(names.begin(), names.end(), v) != names.end()) row = v;
  if (!row)
    bad(file, n, "'{}': unknown value '{}': it would select no row (valid: {}){}", key, v, fmt::join(names, ", "),
        did_you_mean(v, names));
  return *row;
}

std::vector<std::string> names(const std::string& file, const YAML::Node& n, const std::string& key,
                               const SelectVocabulary& known) {
  std::vector<std::string> out;
  if (n.IsScalar()) out.push_back(known_value(file, n, key, known));
  else if (n.IsSequence())
    for (const auto& x : n) {
      if (!x.IsScalar()) bad(file, x, "'{}': expected a name", key);
      out.push_back(known_value(file, x, key, known));
    }
  else bad(file, n, "'{}': expected a name or a list of names", key);
  return out;
}

// "64M", "1G", "8": binary suffixes as on the command line.
std::uint64_t size_value(const std::string& file, const YAML::Node& n, const std::string& key) {
  const std::string t = n.IsScalar() ? n.as<std::string>() : "";
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  const std::string suffix(end, t.data() + t.size());
  int shift = suffix.empty()  ? 0
              : suffix == "K" ? 10
              : suffix == "M" ? 20
              : suffix == "G" ? 30
              : suffix == "T" ? 40
                              : -1;
  if (ec != std::errc() || shift < 0 || (shift && v > (UINT64_MAX >> shift)))
    bad(file, n, "'{}': '{}' is not a size; expected bytes, optionally with K, M, G or T (powers of 1024)", key, t);
  return v << shift;
}

double number_value(const std::string& file, const YAML::Node& n, const LimitKey& k) {
  const std::string t = n.IsScalar() ? n.as<std::string>() : "";
  double v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v) || v < 0)
    bad(file, n, "'{}': '{}' is not valid; expected a number >= 0 ({})", k.key, t, k.meaning);
  return v;
}

RowSelector parse_select(const std::string& file, const YAML::Node& n, const SelectVocabulary& known) {
  check_keys(file, n, kSelectKeys, "'select'");
  RowSelector s;
  const std::vector<std::pair<const char*, std::vector<std::string> RowSelector::*>> lists = {
      {"collective", &RowSelector::collective},
      {"impl", &RowSelector::impl},
      {"transport", &RowSelector::transport},
      {"dtype", &RowSelector::dtype},
      {"op", &RowSelector::op},
      {"mode", &RowSelector::mode},
      {"group", &RowSelector::group}};
  for (const auto& [key, member] : lists)
    if (n[key]) s.*member = names(file, n[key], key, known);
  if (n["min_size"]) s.min_bytes = size_value(file, n["min_size"], "min_size");
  if (n["max_size"]) s.max_bytes = size_value(file, n["max_size"], "max_size");
  if (s.min_bytes > s.max_bytes) bad(file, n, "'select': min_size is above max_size");
  return s;
}

Requirement parse_require(const std::string& file, const YAML::Node& n) {
  std::vector<std::string> valid;
  for (const LimitKey& k : kLimitKeys) valid.push_back(k.key);
  check_keys(file, n, valid, "'require'");
  Requirement r;
  for (const LimitKey& k : kLimitKeys)
    if (n[k.key]) r.*k.member = number_value(file, n[k.key], k);
  if (n.size() == 0) bad(file, n, "'require' is empty; give at least one of {}", fmt::join(valid, ", "));
  return r;
}

Rule parse_rule(const std::string& file, const YAML::Node& n, size_t index, const SelectVocabulary& known) {
  check_keys(file, n, kRuleKeys, "a rule");
  Rule r;
  r.where = fmt::format("{}:{}", file, n.Mark().line + 1);
  r.name = n["name"] && n["name"].IsScalar() ? n["name"].as<std::string>() : fmt::format("rule {}", index + 1);
  r.select = n["select"] ? parse_select(file, n["select"], known) : RowSelector{};
  if (!n["require"]) bad(file, n, "rule '{}' has no 'require'", r.name);
  r.require = parse_require(file, n["require"]);
  return r;
}

bool any_of(const std::vector<std::string>& wanted, const std::string& v) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), v) != wanted.end();
}

}  // namespace

bool RowSelector::matches(const RunRecord& r) const {
  return any_of(collective, r.collective) && any_of(impl, r.impl) && any_of(transport, r.transport) &&
         any_of(dtype, r.dtype) && any_of(op, r.op) && any_of(mode, r.mode) && any_of(group, r.group) &&
         r.bytes >= min_bytes && r.bytes <= max_bytes;
}

std::vector<Rule> parse_rules(const std::string& text, const std::string& file, const SelectVocabulary& known) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail(ExitCode::usage, "{}:{}:{}: not valid YAML: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (!doc.IsMap() || !doc["rules"])
    fail(ExitCode::usage,
         "{}: expected a mapping with the key 'rules' holding a list of rules (see docs/examples/rules/)", file);
  check_keys(file, doc, kTopKeys, "the rules file");
  const YAML::Node list = doc["rules"];
  if (!list.IsSequence() || list.size() == 0) bad(file, list, "'rules' must be a non-empty list of rules");
  std::vector<Rule> rules;
  try {
    for (size_t i = 0; i < list.size(); ++i) rules.push_back(parse_rule(file, list[i], i, known));
  } catch (const YAML::Exception& e) {
    fail(ExitCode::usage, "{}:{}:{}: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  return rules;
}

std::vector<Rule> load_rules(const std::string& path, const std::string& flag, const SelectVocabulary& known) {
  std::ifstream in(path);
  if (!in) fail(ExitCode::usage, "{}: cannot read {}: {}", flag, path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_rules(text.str(), path, known);
}

Rule min_busbw_rule(double gbps) {
  Rule r;
  r.name = fmt::format("busbw at least {:g} GB/s from 1 MiB on", gbps);
  r.where = "--min-busbw";
  r.select.min_bytes = kMinBusbwFromBytes;
  r.require.min_busbw_gbps = gbps;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Checking
// ---------------------------------------------------------------------------------------------

namespace {

struct RowRef {
  const ResultSet* run;
  size_t index;
  const RunRecord& row() const { return run->rows[index]; }
  std::optional<double> extra(const char* column) const {
    if (index >= run->extra.size()) return std::nullopt;
    auto it = run->extra[index].find(column);
    if (it == run->extra[index].end() || it->second.empty()) return std::nullopt;
    double v = 0;
    auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || end != it->second.data() + it->second.size()) return std::nullopt;
    return v;
  }
};

// One kind of check: the limit it reads, whether it is a minimum, the measured figure of a row
// (nullopt: the row does not carry it) and the column it needs (nullptr: always there).
struct CheckKind {
  const char* name;
  std::optional<double> Requirement::*limit;
  bool minimum;
  const char* unit;
  const char* column;
  std::function<std::optional<double>(const RowRef&)> value;
};

// Health figures of a row (telemetry/, --telemetry on), else the named column of a foreign file.
std::optional<double> or_column(std::optional<double> from_health, const RowRef& r, const char* column) {
  return from_health ? from_health : r.extra(column);
}

// How many clock-throttle reasons (other than benign ones) were active while the row ran.
std::optional<double> throttle_reasons(const RowHealth& h) {
  if (!h.throttle) return std::nullopt;
  return static_cast<double>(std::popcount(*h.throttle));
}

// The growth of every error counter read while the row ran, added up.
std::optional<double> error_growth(const RowHealth& h) {
  std::optional<double> sum;
  for (const auto& c :
       {h.nvlink_errors, h.pcie_replays, h.ecc_corrected, h.ecc_uncorrected, h.xid_events, h.nic_errors})
    if (c) sum = sum.value_or(0) + static_cast<double>(*c);
  return sum;
}

// busbw over a reference figure of the row (its link ceiling, its prediction).
std::optional<double> ratio_to(const RowRef& r, std::optional<double> reference) {
  if (!reference || *reference <= 0) return std::nullopt;
  return r.row().busbw_gbps / *reference;
}

const std::vector<CheckKind>& check_kinds() {
  static const std::vector<CheckKind> kinds = {
      {"min_busbw", &Requirement::min_busbw_gbps, true, " GB/s", nullptr,
       [](const RowRef& r) { return std::optional(r.row().busbw_gbps); }},
      {"min_busbw_fraction_of_ceiling", &Requirement::min_fraction_of_ceiling, true, "", kCeilingColumn,
       [](const RowRef& r) { return ratio_to(r, r.row().link_ceiling_gbps); }},
      {"min_busbw_fraction_of_prediction", &Requirement::min_fraction_of_prediction, true, "", kPredictionColumn,
       [](const RowRef& r) { return ratio_to(r, r.row().predicted_busbw_gbps); }},
      {"max_latency_us", &Requirement::max_latency_us, false, " us", nullptr,
       [](const RowRef& r) { return std::optional(r.row().time_median_us); }},
      {"max_time_cv", &Requirement::max_time_cv, false, "", nullptr,
       [](const RowRef& r) { return std::optional(r.row().time_cv); }},
      {"max_p95_over_median", &Requirement::max_p95_over_median, false, "", nullptr,
       [](const RowRef& r) {
         const RunRecord& x = r.row();
         return x.time_median_us > 0 ? std::optional(x.time_p95_us / x.time_median_us) : std::nullopt;
       }},
      {"max_wrong", &Requirement::max_wrong, false, " elements", nullptr,
       [](const RowRef& r) {  // an unchecked row (-c 0) has no count: not available, never a pass
         const auto& w = r.row().wrong;
         return w ? std::optional(static_cast<double>(*w)) : std::nullopt;
       }},
      {"max_straggler_ratio", &Requirement::max_straggler_ratio, false, "", kStragglerColumn,
       [](const RowRef& r) { return r.row().straggler_ratio; }},
      {"max_group_outlier_ratio", &Requirement::max_group_outlier_ratio, false, "", kGroupOutlierColumn,
       [](const RowRef& r) { return r.row().group_outlier_ratio; }},
      {"max_temperature_c", &Requirement::max_temperature_c, false, " C", kTemperatureColumn,
       [](const RowRef& r) { return or_column(r.row().health.temp_max_c, r, kTemperatureColumn); }},
      {"max_throttle_events", &Requirement::max_throttle_events, false, "", kThrottleColumn,
       [](const RowRef& r) { return or_column(throttle_reasons(r.row().health), r, kThrottleColumn); }},
      {"max_error_counter_growth", &Requirement::max_error_counter_growth, false, "", kErrorGrowthColumn,
       [](const RowRef& r) { return or_column(error_growth(r.row().health), r, kErrorGrowthColumn); }},
      {"max_energy_j", &Requirement::max_energy_j, false, " J", kEnergyColumn,
       [](const RowRef& r) { return r.row().health.energy_per_coll_j; }},
      {"min_gb_per_joule", &Requirement::min_gb_per_joule, true, " GB/J", kEnergyEfficiencyColumn,
       [](const RowRef& r) { return r.row().health.gb_per_joule; }},
  };
  return kinds;
}

// A row in a verdict: its case and size, the link it measured where it names one (a links.csv row
// or a pair's), and its cycle where a run repeated its sweep (-N).
std::string label_of(const RowRef& r, bool cycles);

CheckVerdict run_check(const CheckKind& k, double limit, const std::vector<RowRef>& rows, bool cycles,
                       std::set<std::pair<const ResultSet*, size_t>>& broken_rows) {
  CheckVerdict v;
  v.check = fmt::format("{} {:g}{}", k.name, limit, k.unit);
  const bool wrong_check = k.limit == &Requirement::max_wrong;
  int carried = 0, unchecked = 0;
  for (const RowRef& r : rows) {
    const RunRecord& x = r.row();
    std::string why;
    if (const std::string damage = r.run->damage(r.index); !damage.empty()) {
      why = fmt::format("DAMAGED, not judged ({}: {})", r.run->where(r.index), damage);
    } else if (x.status == RowStatus::failed) {
      why = fmt::format("not measured: failed{}", x.reason.empty() ? "" : " (" + single_line(x.reason) + ")");
    } else if (auto value = k.value(r)) {
      ++carried;
      if (!std::isfinite(*value) || *value < 0)  // a foreign file's column: no figure of a check is below 0
        why = fmt::format("DAMAGED, not judged ({}: {} is {})", r.run->where(r.index), k.column ? k.column : k.name,
                          *value);
      else if (k.minimum ? *value < limit : *value > limit)
        why = fmt::format("{:.4g}{} {} {:g}", *value, k.unit, k.minimum ? "<" : ">", limit);
      else if (wrong_check && x.status == RowStatus::wrong) why = "status wrong (guard damage or a failed check)";
    } else {
      unchecked += wrong_check;  // its data was not checked: no count, so neither a pass nor a failure
      continue;
    }
    if (why.empty()) continue;
    v.broken.push_back(fmt::format("{}: {}", label_of(r, cycles), why));
    broken_rows.insert({r.run, r.index});
  }
  if (!v.broken.empty()) {
    v.state = CheckState::fail;
  } else if (unchecked > 0) {  // an unchecked row proves nothing about its elements
    v.state = CheckState::not_available;
    v.note = fmt::format(
        "not available for {} of {} selected rows: their data was not checked (-c 0, or rows of "
        "links.csv); select checked rows, or run with -c 1",
        unchecked, rows.size());
  } else if (k.column && carried == 0) {
    v.state = CheckState::not_available;
    v.note = fmt::format("not available: no selected row carries the column '{}'", k.column);
  }
  return v;
}

std::optional<std::string> ref_host(const RowRef& r) { return row_host(*r.run, r.index); }
std::optional<std::string> ref_link(const RowRef& r) { return row_link(*r.run, r.index); }

std::string label_of(const RowRef& r, bool cycles) {
  std::string label = row_label(r.row(), cycles);
  if (const auto link = ref_link(r)) label += "  link " + *link;
  return label;
}

std::vector<PlaceVerdict> place_verdicts(const std::vector<RowRef>& all,
                                         const std::set<std::pair<const ResultSet*, size_t>>& broken,
                                         const std::function<std::optional<std::string>(const RowRef&)>& place_of,
                                         const std::string& missing_note) {
  std::map<std::string, PlaceVerdict> by_name;
  std::map<std::string, std::string> skip_reason;  // a place's first skipped row's reason
  std::set<std::string> measured;                  // places with a row not skipped
  int unplaced = 0;
  for (const RowRef& r : all) {
    auto place = place_of(r);
    if (!place) {
      ++unplaced;
      continue;
    }
    PlaceVerdict& p = by_name[*place];
    p.name = *place;
    ++p.rows;
    if (r.row().status != RowStatus::skipped) measured.insert(*place);
    else skip_reason.emplace(*place, single_line(r.row().reason));
    if (broken.count({r.run, r.index})) {
      ++p.failed_rows;
      p.state = CheckState::fail;
    }
  }
  std::vector<PlaceVerdict> out;
  for (auto& [n, p] : by_name) {
    if (!measured.count(n)) {  // a link that could not be measured has not passed
      p.state = CheckState::not_available;
      p.note = fmt::format("every one of its {} rows was skipped ({})", p.rows, skip_reason[n]);
    }
    out.push_back(p);
  }
  if (unplaced > 0) {
    PlaceVerdict na;
    na.name = out.empty() ? "(all)" : "(the others)";
    na.state = CheckState::not_available;
    na.rows = unplaced;
    na.note = fmt::format("not available for {} row{}: {}", unplaced, unplaced == 1 ? "" : "s", missing_note);
    out.push_back(na);
  }
  return out;
}

// The link verdicts by verdict (results/attribution.h); nullopt where no verdict is of a link
// between two ranks.
std::optional<Attribution> attribute_link_verdicts(const std::vector<PlaceVerdict>& links) {
  std::vector<LinkSample> samples;
  for (const PlaceVerdict& p : links)
    if (p.state != CheckState::not_available)
      if (const auto ends = link_endpoints(p.name))
        samples.push_back({p.name, ends->first, ends->second, 0, p.state == CheckState::fail});
  if (samples.empty()) return std::nullopt;
  return attribute_by_verdict(samples);
}

// Where the per-node verdict puts each row: a broken row of a link on the host of the culprit
// it is blamed on (not on the host that sent it); a broken row of a link at fault itself on no
// node's account; every other row as row_host() says.
struct NodeBlame {
  std::set<std::pair<const ResultSet*, size_t>> broken;
  std::function<std::optional<std::string>(const RowRef&)> node_of;
};

NodeBlame node_blame(const std::vector<RowRef>& all, const std::set<std::pair<const ResultSet*, size_t>>& broken,
                     const std::optional<Attribution>& attribution) {
  NodeBlame out{broken, ref_host};
  if (!attribution) return out;
  std::map<std::pair<const ResultSet*, size_t>, std::string> blamed_host;
  for (const RowRef& r : all) {
    const auto key = std::pair{r.run, r.index};
    const auto link = ref_link(r);
    if (!link || !broken.count(key)) continue;
    const std::string blame = attribution->blame_of(*link);
    const std::vector<std::string> culprits = attribution->culprits();
    const std::string first = blame.substr(0, blame.find('+'));
    if (blame == "link") out.broken.erase(key);
    else if (std::find(culprits.begin(), culprits.end(), first) != culprits.end())
      blamed_host[key] = first.substr(0, first.find(':'));
  }
  out.node_of = [blamed_host](const RowRef& r) -> std::optional<std::string> {
    const auto it = blamed_host.find({r.run, r.index});
    return it != blamed_host.end() ? std::optional(it->second) : ref_host(r);
  };
  return out;
}

const char* state_name(CheckState s) { return s == CheckState::pass ? "PASS" : s == CheckState::fail ? "FAIL" : "N/A"; }

std::string xml_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';  // not allowed in XML 1.0
        else out += c;
    }
  }
  return out;
}

}  // namespace

bool RuleVerdict::failed() const {
  return std::any_of(checks.begin(), checks.end(), [](const CheckVerdict& c) { return c.state == CheckState::fail; });
}

CheckState RuleVerdict::state() const {
  if (failed()) return CheckState::fail;
  const bool judged = std::none_of(checks.begin(), checks.end(),
                                   [](const CheckVerdict& c) { return c.state == CheckState::not_available; });
  return judged ? CheckState::pass : CheckState::not_available;
}

namespace {

// The first kBrokenRowsListed of `broken`, each after `prefix`, then how many more there are.
std::string listed_rows(const std::vector<std::string>& broken, const char* prefix) {
  std::string s;
  for (size_t i = 0; i < broken.size() && i < kBrokenRowsListed; ++i) s += prefix + broken[i] + "\n";
  if (broken.size() > kBrokenRowsListed)
    s += fmt::format("{}... and {} more row{}\n", prefix, broken.size() - kBrokenRowsListed,
                     broken.size() - kBrokenRowsListed == 1 ? "" : "s");
  return s;
}

}  // namespace

std::optional<std::string> row_host(const ResultSet& set, size_t i) {
  if (!set.rows[i].host.empty()) return set.rows[i].host;
  if (i < set.extra.size())
    if (auto it = set.extra[i].find(kHostColumn); it != set.extra[i].end() && !it->second.empty()) return it->second;
  std::set<std::string> hosts;
  const Json& c = set.context;
  if (c.contains("ranks_detail") && c["ranks_detail"].is_array())
    for (const Json& d : c["ranks_detail"])
      if (d.is_object() && d.contains("host") && d["host"].is_string()) hosts.insert(d["host"].get<std::string>());
  if (hosts.size() == 1) return *hosts.begin();
  return std::nullopt;
}

std::optional<std::string> row_link(const ResultSet& set, size_t i) {
  if (!set.rows[i].link.empty()) return set.rows[i].link;
  if (i < set.extra.size())
    if (auto it = set.extra[i].find(kLinkColumn); it != set.extra[i].end() && !it->second.empty()) return it->second;
  return std::nullopt;
}

AcceptReport evaluate_rules(const std::vector<Rule>& rules, const std::vector<ResultSet>& runs) {
  std::vector<RowRef> all;
  for (const ResultSet& run : runs)
    for (size_t i = 0; i < run.rows.size(); ++i) all.push_back({&run, i});
  AcceptReport rep;
  std::set<std::pair<const ResultSet*, size_t>> broken;
  const bool cycles = std::any_of(all.begin(), all.end(), [](const RowRef& r) { return r.row().cycle > 1; });
  for (const Rule& rule : rules) {
    RuleVerdict rv;
    rv.rule = &rule;
    std::vector<RowRef> selected;
    std::string skipped;  // a skipped row is a case that cannot run here (by design): not checked
    for (const RowRef& r : all) {
      if (!rule.select.matches(r.row())) continue;
      if (r.row().status != RowStatus::skipped) selected.push_back(r);
      else if (skipped.empty())
        skipped = fmt::format("{}: skipped ({})", label_of(r, cycles), single_line(r.row().reason));
    }
    rv.rows = static_cast<int>(selected.size());
    if (selected.empty()) {
      rv.checks.push_back({"selects measured rows",
                           CheckState::fail,
                           "",
                           {skipped.empty() ? "no row of the results matches the selection"
                                            : "every row it selects was skipped, e.g. " + skipped}});
    } else {
      for (const CheckKind& k : check_kinds())
        if (rule.require.*k.limit)
          rv.checks.push_back(run_check(k, *(rule.require.*k.limit), selected, cycles, broken));
    }
    rep.passed &= !rv.failed();
    rep.rules.push_back(std::move(rv));
  }
  rep.links = place_verdicts(all, broken, ref_link, "the rows carry no 'link' column naming the link they measured");
  rep.attribution = attribute_link_verdicts(rep.links);
  const NodeBlame blame = node_blame(all, broken, rep.attribution);
  rep.nodes =
      place_verdicts(all, blame.broken, blame.node_of,
                     "the run spans several hosts and its rows carry no 'host' column saying which measured them");
  return rep;
}

namespace {

// "per endpoint": each endpoint of the judged links with its role and evidence, then the links
// at fault themselves.
std::string attribution_section(const Attribution& a) {
  std::string s = "#\n# per endpoint (a failing link is put on the end whose every link fails):\n";
  for (const EndpointFinding& f : a.endpoints)
    s += fmt::format("#   {:<4} {}: {}{}\n", f.role == EndpointRole::fine ? "PASS" : "FAIL", f.endpoint,
                     f.role == EndpointRole::fine ? "" : std::string(role_name(f.role)) + ": ", f.evidence);
  for (const LinkJudgement& l : a.links)
    if (l.blame == "link")
      s += fmt::format("#   FAIL {}: the link itself: it failed, while {} and {} pass on their other links\n", l.link,
                       l.a, l.b);
  return s;
}

}  // namespace

std::string AcceptReport::text() const {
  std::string s = "# ccbench accept\n";
  for (const RuleVerdict& rv : rules) {
    s += fmt::format("#\n# rule '{}' ({}): {} ({} measured row{} selected)\n", rv.rule->name, rv.rule->where,
                     state_name(rv.state()), rv.rows, rv.rows == 1 ? "" : "s");
    for (const CheckVerdict& c : rv.checks) {
      s += fmt::format("#   {:<4} {}{}\n", state_name(c.state), c.check, c.note.empty() ? "" : "  (" + c.note + ")");
      s += listed_rows(c.broken, "#          ");
    }
  }
  auto places = [&](const char* what, const std::vector<PlaceVerdict>& v) {
    s += fmt::format("#\n# per {}:\n", what);
    for (const PlaceVerdict& p : v)
      s += p.state == CheckState::not_available ? fmt::format("#   N/A  {}: {}\n", p.name, p.note)
                                                : fmt::format("#   {:<4} {}: {} of {} rows broke a rule\n",
                                                              state_name(p.state), p.name, p.failed_rows, p.rows);
  };
  places("node", nodes);
  places("link", links);
  if (attribution) s += attribution_section(*attribution);
  auto count = [&](CheckState st) {
    return std::count_if(rules.begin(), rules.end(), [st](const RuleVerdict& r) { return r.state() == st; });
  };
  const auto failed = count(CheckState::fail), unjudged = count(CheckState::not_available);
  s += fmt::format("#\n# Acceptance: {} ({} of {} rule{} failed{})\n",
                   !passed    ? "FAIL"
                   : unjudged ? "N/A"
                              : "PASS",
                   failed, rules.size(), rules.size() == 1 ? "" : "s",
                   unjudged ? fmt::format(", {} not judged in full: see N/A above", unjudged) : "");
  return s;
}

namespace {

// One JUnit test case: a check of a rule, a node or a link.
struct JunitCase {
  std::string classname, name, failure, skipped, detail;  // failure/skipped: the message, if any
};
using JunitSuite = std::pair<std::string, std::vector<JunitCase>>;

JunitSuite rule_suite(const RuleVerdict& rv, const std::string& suite_name) {
  std::vector<JunitCase> cases;
  for (const CheckVerdict& c : rv.checks) {
    JunitCase k{"ccbench.accept." + suite_name, rv.rule->name + ": " + c.check, "", "", ""};
    if (c.state == CheckState::fail) {
      k.failure = fmt::format("{} row{} broke it", c.broken.size(), c.broken.size() == 1 ? "" : "s");
      k.detail = listed_rows(c.broken, "");
    } else if (c.state == CheckState::not_available) {
      k.skipped = c.note;
    }
    cases.push_back(std::move(k));
  }
  return {rv.rule->name, std::move(cases)};
}

JunitSuite endpoint_suite(const Attribution& a) {
  std::vector<JunitCase> cases;
  for (const EndpointFinding& f : a.endpoints) {
    JunitCase k{"ccbench.accept.endpoints", f.endpoint, "", "", ""};
    if (f.role != EndpointRole::fine) {
      k.failure = fmt::format("{}: {}", role_name(f.role), f.evidence);
      for (const LinkJudgement& l : a.links)
        if (l.failed && (l.a == f.endpoint || l.b == f.endpoint)) k.detail += fmt::format("{} failed\n", l.link);
    }
    cases.push_back(std::move(k));
  }
  return {"endpoints", std::move(cases)};
}

JunitSuite place_suite(const std::string& title, const std::vector<PlaceVerdict>& places) {
  std::vector<JunitCase> cases;
  for (const PlaceVerdict& p : places) {
    JunitCase k{"ccbench.accept." + title, p.name, "", "", ""};
    if (p.state == CheckState::fail) k.failure = fmt::format("{} of {} rows broke a rule", p.failed_rows, p.rows);
    if (p.state == CheckState::not_available) k.skipped = p.note;
    cases.push_back(std::move(k));
  }
  return {title, std::move(cases)};
}

// <testsuite> with its cases; adds its counts to the totals.
std::string render_suite(const JunitSuite& suite, int& tests, int& failures, int& skipped) {
  int f = 0, sk = 0;
  std::string inner;
  for (const JunitCase& c : suite.second) {
    f += !c.failure.empty();
    sk += !c.skipped.empty();
    inner += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", xml_escaped(c.classname),
                         xml_escaped(c.name));
    if (!c.failure.empty())
      inner += fmt::format(">\n      <failure message=\"{}\" type=\"threshold\">{}</failure>\n    </testcase>\n",
                           xml_escaped(c.failure), xml_escaped(c.detail));
    else if (!c.skipped.empty())
      inner += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml_escaped(c.skipped));
    else inner += "/>\n";
  }
  tests += static_cast<int>(suite.second.size());
  failures += f;
  skipped += sk;
  return fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
      "time=\"0\">\n{}  </testsuite>\n",
      xml_escaped(suite.first), suite.second.size(), f, sk, inner);
}

}  // namespace

std::string AcceptReport::junit_xml(const std::string& suite_name) const {
  std::vector<JunitSuite> suites;
  for (const RuleVerdict& rv : rules) suites.push_back(rule_suite(rv, suite_name));
  suites.push_back(place_suite("nodes", nodes));
  suites.push_back(place_suite("links", links));
  if (attribution) suites.push_back(endpoint_suite(*attribution));
  int tests = 0, failures = 0, skipped = 0;
  std::string body;
  for (const JunitSuite& s : suites) body += render_suite(s, tests, failures, skipped);
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ccbench accept {}\" tests=\"{}\" "
      "failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"0\">\n{}</testsuites>\n",
      xml_escaped(suite_name), tests, failures, skipped, body);
}

}  // namespace ccbench
