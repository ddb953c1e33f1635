#include "results/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "results/format.h"

namespace ccbench {

namespace {

std::string placement(const RunRecord& r) { return r.in_place ? "in-place" : "out-of-place"; }

// Root and group are named only where they are not the default.
std::string root_and_group(const RunRecord& r) {
  std::string s;
  if (r.root >= 0) s += fmt::format("  root {}", r.root);
  if (r.group != "world") s += fmt::format("  group {}", r.group);
  return s;
}

// Right-aligned columns; header rows start with "# ", data rows with `data_prefix` (as wide),
// so that the columns line up under their names. With `left_last` the last column (free text)
// is left-aligned.
std::string layout(const std::vector<std::vector<std::string>>& header,
                   const std::vector<std::vector<std::string>>& data, const char* data_prefix, bool left_last) {
  std::vector<size_t> width;
  for (const auto* part : {&header, &data})
    for (const auto& row : *part)
      for (size_t i = 0; i < row.size(); ++i) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], row[i].size());
      }
  std::string s;
  auto emit = [&](const std::vector<std::string>& row, const char* prefix) {
    std::string l = prefix;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) l += "  ";
      l += left_last && i + 1 == width.size() ? row[i] : fmt::format("{:>{}}", row[i], width[i]);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    s += l + "\n";
  };
  for (const auto& row : header) emit(row, "# ");
  for (const auto& row : data) emit(row, data_prefix);
  return s;
}

bool is_ok(const RunRecord& r) { return r.status == RowStatus::ok; }

// Beside the batch figure, the median iteration's is shown where the two differ by more than
// this fraction: small sizes, where the batch hides per-call latency, and noisy runs.
constexpr double kMedianNoteFraction = 0.10;

bool median_differs(const RunRecord& r) {
  return std::abs(r.busbw_median_gbps - r.busbw_gbps) > kMedianNoteFraction * std::max(r.busbw_gbps, 1e-12) &&
         fmt::format("{:.2f}", r.busbw_median_gbps) != fmt::format("{:.2f}", r.busbw_gbps);
}

}  // namespace

std::string comparison_table(const std::vector<RunRecord>& rows, const std::string& baseline, bool use_median) {
  struct Block {
    std::string key;
    const RunRecord* first;
    std::vector<const RunRecord*> recs;
  };
  std::vector<Block> blocks;
  for (const RunRecord& r : rows) {
    const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", r.collective,
                                        r.dtype, r.op, r.mode, r.in_place, r.ranks, r.ranks_per_node, r.device,
                                        r.root, r.group);
    auto it = std::find_if(blocks.begin(), blocks.end(), [&](const Block& b) { return b.key == key; });
    if (it == blocks.end()) it = blocks.insert(blocks.end(), Block{key, &r, {}});
    it->recs.push_back(&r);
  }

  auto value = [&](const RunRecord& r) { return use_median ? r.busbw_median_gbps : r.busbw_gbps; };
  std::string out;
  bool any_ratio = false;
  for (const Block& b : blocks) {
    // Columns: implementations in order of first appearance; one implementation over several
    // transports gets a column per transport.
    std::vector<std::pair<std::string, std::string>> cols;
    for (const RunRecord* r : b.recs)
      if (std::find(cols.begin(), cols.end(), std::pair{r->impl, r->transport}) == cols.end())
        cols.emplace_back(r->impl, r->transport);
    if (cols.size() < 2) continue;
    std::vector<std::string> labels;
    for (const auto& col : cols) {
      const auto n = std::count_if(cols.begin(), cols.end(), [&](const auto& c) { return c.first == col.first; });
      labels.push_back(n > 1 ? col.first + "/" + col.second : col.first);
    }
    const auto base_it = std::find_if(cols.begin(), cols.end(), [&](const auto& c) { return c.first == baseline; });
    const long base = base_it == cols.end() ? -1 : base_it - cols.begin();
    any_ratio |= base >= 0;

    std::map<std::uint64_t, std::vector<const RunRecord*>> by_size;  // ascending sizes
    for (const RunRecord* r : b.recs) {
      auto& cells = by_size[r->bytes];
      cells.resize(cols.size(), nullptr);
      const size_t c = std::find(cols.begin(), cols.end(), std::pair{r->impl, r->transport}) - cols.begin();
      if (!cells[c]) cells[c] = r;  // a repeated measurement: the first one counts
    }

    std::vector<std::vector<std::string>> header{{"size"}}, data;
    header[0].insert(header[0].end(), labels.begin(), labels.end());
    for (const auto& [bytes, cells] : by_size) {
      std::vector<std::string> row{human_size(bytes)};
      const RunRecord* ref = base >= 0 ? cells[base] : nullptr;
      for (size_t c = 0; c < cells.size(); ++c) {
        const RunRecord* r = cells[c];
        if (!r) {
          row.push_back("-");
        } else if (!is_ok(*r)) {
          row.push_back(std::string(row_status_name(r->status)));
        } else {
          std::string text = fmt::format("{:.2f}", value(*r));
          if (static_cast<long>(c) != base && ref && is_ok(*ref) && value(*ref) > 0)
            text += fmt::format(" ({:.2f}x)", value(*r) / value(*ref));
          if (!use_median && median_differs(*r)) text += fmt::format(" p50 {:.2f}", r->busbw_median_gbps);
          row.push_back(std::move(text));
        }
      }
      data.push_back(std::move(row));
    }

    const RunRecord& f = *b.first;
    std::string ranks = fmt::format("ranks {}", f.ranks);
    if (f.ranks_per_node > 0) ranks += fmt::format(" ({} per node)", f.ranks_per_node);
    out += "#\n";
    out += fmt::format("# {}  dtype {}  op {}  mode {}  {}  {}  device {}{}\n", f.collective, f.dtype, f.op, f.mode,
                       placement(f), ranks, f.device, root_and_group(f));
    out += layout(header, data, "# ", false);  // all comment lines: it follows the table
  }
  if (out.empty()) return out;
  std::string head = fmt::format("# Bus bandwidth by implementation, GB/s ({})",
                                 use_median ? "median iteration" : "batch average, as the table and nccl-tests");
  if (any_ratio) head += fmt::format("; (x) = ratio to {} at the same size", baseline);
  if (!use_median)
    head += fmt::format("; p50 = busbw of the median single call, where it differs by more than {:g}%", kMedianNoteFraction * 100);
  return head + "\n" + out;
}

namespace {

const std::vector<std::string> kPairFields = {"impl", "transport", "device", "dtype", "op", "mode", "group"};
const std::vector<std::string> kCompareFormats = {"table", "md", "json"};

// The member behind a --pair field name (one of kPairFields).
std::string RunRecord::*member_of(const std::string& field) {
  if (field == "impl") return &RunRecord::impl;
  if (field == "transport") return &RunRecord::transport;
  if (field == "device") return &RunRecord::device;
  if (field == "dtype") return &RunRecord::dtype;
  if (field == "op") return &RunRecord::op;
  if (field == "mode") return &RunRecord::mode;
  return &RunRecord::group;
}

// Everything that names a case except the size: the table's case and the placement.
std::string match_key(const RunRecord& r) { return fmt::format("{}\x1f{}", case_key(r), r.in_place); }

// The case in words, as every flagged line names it.
std::string row_title(const RunRecord& r) { return fmt::format("{}  {}", case_title(r), placement(r)); }

// Relative spread of one row's iteration times.
double spread(const RunRecord& r) {
  const double tail = r.time_median_us > 0 ? r.time_p95_us / r.time_median_us - 1 : 0;
  return std::max({r.time_cv, tail, 0.0});
}

enum class Verdict { same, faster, slower, isolated, now_bad, now_skipped, now_ok, not_ok, missing, extra };

struct Entry {
  const RunRecord* before = nullptr;  // null: only in after
  const RunRecord* after = nullptr;   // null: missing now
  bool by_time = false;               // time_median compared (latency-bound), else busbw_median
  double ratio = 0;                   // after / before of the compared figure; 0 where not compared
  double threshold = 0;               // slowdown that counts: max(tolerance, both spreads)
  Verdict verdict = Verdict::same;
  bool failure = false;
  std::string label() const;          // the case, size included
};

const RunRecord& any_row(const Entry& e) { return e.before ? *e.before : *e.after; }

std::string Entry::label() const { return row_label(any_row(*this)); }

std::string verdict_text(const Entry& e) {
  switch (e.verdict) {
    case Verdict::same: return "";
    case Verdict::faster: return "faster";
    case Verdict::slower: return fmt::format("SLOWER (beyond {:.0f}% noise/tolerance)", e.threshold * 100);
    case Verdict::isolated:
      return fmt::format("{} (beyond {:.0f}%, but at this size only)", e.failure ? "SLOWER" : "slower", e.threshold * 100);
    case Verdict::now_bad: return fmt::format("NOW {}", row_status_name(e.after->status));
    case Verdict::now_skipped: return e.failure ? "NOW skipped" : "now skipped (allowed)";
    case Verdict::now_ok: return "now ok";
    case Verdict::not_ok: return fmt::format("{} before and after", row_status_name(e.after->status));
    case Verdict::missing: return e.failure ? "MISSING now" : "missing now (allowed)";
    case Verdict::extra: return "only after";
  }
  return "";
}

// Per case of the baseline: the median time of its fastest ok size (the fixed cost).
std::map<std::string, double> fixed_costs(const std::vector<RunRecord>& rows) {
  std::map<std::string, double> cost;
  for (const RunRecord& r : rows) {
    if (r.status != RowStatus::ok || r.time_median_us <= 0) continue;
    auto [it, fresh] = cost.emplace(match_key(r), r.time_median_us);
    if (!fresh) it->second = std::min(it->second, r.time_median_us);
  }
  return cost;
}

void judge_measured(Entry& e, double fixed_cost, double tolerance) {
  const RunRecord &b = *e.before, &a = *e.after;
  e.by_time = b.busbw_median_gbps <= 0 || a.busbw_median_gbps <= 0 ||
              (fixed_cost > 0 && b.time_median_us <= kLatencyBoundFactor * fixed_cost);
  double slowdown = 0;
  if (e.by_time) {
    if (b.time_median_us <= 0 || a.time_median_us <= 0) return;  // nothing measured to compare
    e.ratio = a.time_median_us / b.time_median_us;
    slowdown = e.ratio - 1;
  } else {
    e.ratio = a.busbw_median_gbps / b.busbw_median_gbps;
    slowdown = 1 / e.ratio - 1;
  }
  e.threshold = std::max(tolerance, spread(b) + spread(a));
  if (slowdown > e.threshold) e.verdict = Verdict::slower;
  else if (-slowdown / (1 + slowdown) > e.threshold) e.verdict = Verdict::faster;
  e.failure = e.verdict == Verdict::slower;
}

void judge(Entry& e, double fixed_cost, const CompareOptions& o) {
  if (!e.after) {
    e.verdict = Verdict::missing;
    e.failure = !o.allow_missing;
    return;
  }
  if (!e.before) {
    e.verdict = Verdict::extra;
    return;
  }
  const RowStatus b = e.before->status, a = e.after->status;
  if (b == RowStatus::ok && a == RowStatus::ok) return judge_measured(e, fixed_cost, o.tolerance);
  if (a == RowStatus::wrong || a == RowStatus::failed) {
    e.verdict = b == a ? Verdict::not_ok : Verdict::now_bad;
    e.failure = true;
  } else if (a == RowStatus::skipped) {
    e.verdict = b == RowStatus::skipped ? Verdict::not_ok : Verdict::now_skipped;
    e.failure = b != RowStatus::skipped && !o.allow_skipped;
  } else {
    e.verdict = Verdict::now_ok;
  }
}

// A slowdown at one size whose adjacent sizes of the same case are measured and not slower is a
// disturbance of that one measurement (another process, a page fault storm), not a regression:
// a slower link or algorithm shows at neighbouring sizes too. Returns how many it unflagged.
int mark_isolated(std::vector<Entry>& entries) {
  std::map<std::string, std::vector<Entry*>> by_case;  // measured on both sides, by size
  for (Entry& e : entries)
    if (e.before && e.after && e.ratio > 0) by_case[match_key(*e.before)].push_back(&e);
  int unflagged = 0;
  for (auto& [key, v] : by_case) {
    std::sort(v.begin(), v.end(), [](const Entry* a, const Entry* b) { return a->before->bytes < b->before->bytes; });
    std::vector<bool> slower(v.size());
    for (size_t i = 0; i < v.size(); ++i) slower[i] = v[i]->verdict == Verdict::slower;
    for (size_t i = 0; i < v.size(); ++i) {
      const bool has_neighbour = v.size() > 1;
      const bool neighbour_slower = (i > 0 && slower[i - 1]) || (i + 1 < v.size() && slower[i + 1]);
      if (!slower[i] || !has_neighbour || neighbour_slower) continue;
      v[i]->verdict = Verdict::isolated;
      v[i]->failure = false;
      ++unflagged;
    }
  }
  return unflagged;
}

// Applies the pairings: keeps the rows with the paired value and gives the after rows the
// before value, so that they match. The originals stay in `shown` for the report.
std::vector<RunRecord> select_side(const std::vector<RunRecord>& rows, const std::vector<ComparePair>& pairs,
                                   bool after_side) {
  std::vector<RunRecord> out;
  for (const RunRecord& r : rows) {
    RunRecord c = r;
    bool keep = true;
    for (const ComparePair& p : pairs) {
      std::string& v = c.*member_of(p.field);
      keep &= v == (after_side ? p.after : p.before);
      if (after_side) v = p.before;
    }
    if (keep) out.push_back(std::move(c));
  }
  return out;
}

std::vector<Entry> match_rows(const std::vector<RunRecord>& before, const std::vector<RunRecord>& after) {
  std::map<std::string, std::vector<size_t>> unmatched;  // row key -> indices into after, in file order
  for (size_t i = 0; i < after.size(); ++i)
    unmatched[fmt::format("{}\x1f{}", match_key(after[i]), after[i].bytes)].push_back(i);
  std::vector<Entry> entries;
  std::vector<bool> used(after.size(), false);
  for (const RunRecord& b : before) {
    Entry e;
    e.before = &b;
    auto it = unmatched.find(fmt::format("{}\x1f{}", match_key(b), b.bytes));
    if (it != unmatched.end() && !it->second.empty()) {
      e.after = &after[it->second.front()];
      used[it->second.front()] = true;
      it->second.erase(it->second.begin());
    }
    entries.push_back(e);
  }
  for (size_t i = 0; i < after.size(); ++i)
    if (!used[i]) entries.push_back(Entry{nullptr, &after[i]});
  return entries;
}

// Why nothing matched: the fields whose sets of values differ between the two runs.
std::string why_nothing_matched(const std::vector<RunRecord>& before, const std::vector<RunRecord>& after) {
  if (before.empty() || after.empty())
    return fmt::format("the {} run has no row{}", before.empty() ? "earlier" : "later",
                       before.empty() && after.empty() ? "s (neither has)" : "");
  std::string s;
  for (const std::string& f : kPairFields) {
    std::set<std::string> vb, va;
    for (const RunRecord& r : before) vb.insert(r.*member_of(f));
    for (const RunRecord& r : after) va.insert(r.*member_of(f));
    if (vb == va) continue;
    auto list = [](const std::set<std::string>& v) {
      std::string l;
      for (const auto& x : v) l += (l.empty() ? "" : ",") + x;
      return l;
    };
    s += fmt::format("; {} is {} before and {} after", f, list(vb), list(va));
    std::set<std::string> only_b, only_a;
    std::set_difference(vb.begin(), vb.end(), va.begin(), va.end(), std::inserter(only_b, only_b.end()));
    std::set_difference(va.begin(), va.end(), vb.begin(), vb.end(), std::inserter(only_a, only_a.end()));
    if (!only_b.empty() && !only_a.empty())
      s += fmt::format(" (--pair {}={}:{} compares them)", f, *only_b.begin(), *only_a.begin());
  }
  return s.empty() ? "; the sizes, ranks, placements or collectives differ" : s;
}

std::string figure(const RunRecord* r, bool by_time) {
  if (!r) return "-";
  if (r->status != RowStatus::ok) return std::string(row_status_name(r->status));
  return by_time ? fmt::format("{:.3g} us", r->time_median_us) : fmt::format("{:.2f} GB/s", r->busbw_median_gbps);
}

std::string ratio_text(const Entry& e) { return e.ratio > 0 ? fmt::format("{:.2f}x", e.ratio) : "-"; }
std::string noise_text(const Entry& e) { return e.threshold > 0 ? fmt::format("{:.0f}%", e.threshold * 100) : "-"; }

std::vector<std::pair<std::string, std::array<std::string, 2>>> differing_settings(const Json& cb, const Json& ca) {
  std::map<std::string, std::array<std::string, 2>> all;
  if (context_settings(cb).empty() || context_settings(ca).empty()) return {};  // one side unknown: nothing to tell
  for (auto& [k, v] : context_settings(cb)) all[k] = {v, "(unset)"};
  for (auto& [k, v] : context_settings(ca)) {
    auto it = all.find(k);
    if (it == all.end()) all[k] = {"(unset)", v};
    else it->second[1] = v;
  }
  std::vector<std::pair<std::string, std::array<std::string, 2>>> out;
  for (auto& [k, v] : all)
    if (v[0] != v[1]) out.emplace_back(k, v);
  return out;
}

struct Summary {
  const std::vector<Entry>& entries;
  const CompareOptions& o;
  const std::vector<std::pair<std::string, std::array<std::string, 2>>>& settings;
  int matched, failures;
  std::string nothing_matched;  // non-empty: why no row matched
};

std::string pairs_text(const CompareOptions& o) {
  std::string s;
  for (const ComparePair& p : o.pairs) s += fmt::format("{}{} {} -> {}", s.empty() ? "" : ", ", p.field, p.before, p.after);
  return s;
}

std::string verdict_line(const Summary& s) {
  if (!s.nothing_matched.empty()) return "FAILED: no row matched" + s.nothing_matched;
  return fmt::format("{}: {} failure{} in {} matched row{} (tolerance {:g}%, noise-aware)",
                     s.failures ? "FAILED" : "OK", s.failures, s.failures == 1 ? "" : "s", s.matched,
                     s.matched == 1 ? "" : "s", s.o.tolerance * 100);
}

std::string render_table(const Summary& s) {
  std::string out = "# ccbench compare: before -> after. Latency-bound sizes compare the median time, the others the "
                    "median busbw; 'noise' is the slowdown that counts (tolerance or both rows' spread)\n";
  if (!s.o.pairs.empty()) out += "# pairing: " + pairs_text(s.o) + "\n";
  if (!s.settings.empty()) out += "# settings that differ:\n";
  for (const auto& [k, v] : s.settings) out += fmt::format("#   {}: {} -> {}\n", k, v[0], v[1]);
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::vector<std::string>>> blocks;
  for (const Entry& e : s.entries) {
    const std::string t = row_title(any_row(e));
    if (!blocks.count(t)) order.push_back(t);
    blocks[t].push_back({human_size(any_row(e).bytes), e.by_time ? "time" : "busbw", figure(e.before, e.by_time),
                         figure(e.after, e.by_time), ratio_text(e), noise_text(e), verdict_text(e)});
  }
  for (const std::string& t : order)
    out += "#\n# " + t + "\n" +
           layout({{"size", "figure", "before", "after", "ratio", "noise", ""}}, blocks[t], "  ", true);
  std::string flagged;
  for (const Entry& e : s.entries)
    if (e.failure) flagged += fmt::format("# {}: {}  ({} -> {})\n", verdict_text(e), e.label(),
                                          figure(e.before, e.by_time), figure(e.after, e.by_time));
  if (!flagged.empty()) out += "#\n# failures:\n" + flagged;
  return out + "#\n# " + verdict_line(s) + "\n";
}

std::string render_markdown(const Summary& s) {
  std::string out = "# ccbench compare\n\n" + verdict_line(s) + "\n\n";
  if (!s.o.pairs.empty()) out += "Pairing: " + pairs_text(s.o) + "\n\n";
  if (!s.settings.empty()) {
    out += "| setting | before | after |\n|---|---|---|\n";
    for (const auto& [k, v] : s.settings) out += fmt::format("| {} | {} | {} |\n", k, v[0], v[1]);
    out += "\n";
  }
  out += "| case | size | figure | before | after | ratio | noise | verdict |\n|---|---|---|---|---|---|---|---|\n";
  for (const Entry& e : s.entries)
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", row_title(any_row(e)),
                       human_size(any_row(e).bytes), e.by_time ? "time" : "busbw", figure(e.before, e.by_time),
                       figure(e.after, e.by_time), ratio_text(e), noise_text(e),
                       e.failure ? "**" + verdict_text(e) + "**" : verdict_text(e));
  return out;
}

std::string render_json(const Summary& s) {
  Json j;
  j["ok"] = s.failures == 0 && s.nothing_matched.empty();
  j["verdict"] = verdict_line(s);
  j["failures"] = s.failures;
  j["matched"] = s.matched;
  j["tolerance"] = s.o.tolerance;
  j["pairs"] = Json::array();
  for (const ComparePair& p : s.o.pairs) j["pairs"].push_back({{"field", p.field}, {"before", p.before}, {"after", p.after}});
  j["settings_differ"] = Json::object();
  for (const auto& [k, v] : s.settings) j["settings_differ"][k] = {{"before", v[0]}, {"after", v[1]}};
  j["rows"] = Json::array();
  for (const Entry& e : s.entries) {
    Json r = {{"case", row_title(any_row(e))},
              {"figure", e.by_time ? "time_median_us" : "busbw_median_gbps"},
              {"before", e.before ? Json(to_json(*e.before)) : Json(nullptr)},
              {"after", e.after ? Json(to_json(*e.after)) : Json(nullptr)},
              {"ratio", e.ratio > 0 ? Json(e.ratio) : Json(nullptr)},
              {"threshold", e.threshold},
              {"verdict", verdict_text(e)},
              {"failure", e.failure}};
    j["rows"].push_back(std::move(r));
  }
  return j.dump(2) + "\n";
}

}  // namespace

std::string row_label(const RunRecord& r) { return fmt::format("{}  size {}", row_title(r), human_size(r.bytes)); }

ComparePair parse_compare_pair(const std::string& text) {
  const auto eq = text.find('='), colon = text.find(':', eq == std::string::npos ? 0 : eq);
  ComparePair p;
  if (eq != std::string::npos && colon != std::string::npos) {
    p.field = text.substr(0, eq);
    p.before = text.substr(eq + 1, colon - eq - 1);
    p.after = text.substr(colon + 1);
  }
  std::string valid;
  for (const auto& f : kPairFields) valid += (valid.empty() ? "" : ", ") + f;
  if (p.before.empty() || p.after.empty() || std::find(kPairFields.begin(), kPairFields.end(), p.field) == kPairFields.end())
    fail(ExitCode::usage, "--pair: '{}' is not valid; expected FIELD=BEFORE:AFTER with FIELD one of {} (e.g. impl=ring:nccl)",
         text, valid);
  return p;
}

std::vector<std::pair<std::string, std::string>> context_settings(const Json& c) {
  std::map<std::string, std::string> out;
  auto text = [](const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  for (const char* k : {"git_hash", "ccbench_version", "command_line", "ranks", "nodes", "ranks_per_node", "device"})
    if (c.contains(k)) out[k] = text(c[k]);
  for (const char* group : {"versions", "environment"})
    if (c.contains(group) && c[group].is_object())
      for (auto& [k, v] : c[group].items()) out[fmt::format("{}.{}", group, k)] = text(v);
  if (c.contains("ranks_detail") && c["ranks_detail"].is_array()) {
    std::set<std::string> hosts;
    for (const Json& r : c["ranks_detail"])
      if (r.contains("host")) hosts.insert(text(r["host"]));
    std::string h;
    for (const auto& x : hosts) h += (h.empty() ? "" : ",") + x;
    out["hosts"] = h;
  }
  return {out.begin(), out.end()};
}

CompareResult compare_runs(const std::vector<RunRecord>& before_in, const std::vector<RunRecord>& after_in,
                           const CompareOptions& o, const Json& context_before, const Json& context_after) {
  if (!(o.tolerance >= 0 && o.tolerance < 1))
    fail(ExitCode::usage, "tolerance must be a fraction in [0, 1), for example 0.05 for 5%; got {}", o.tolerance);
  if (std::find(kCompareFormats.begin(), kCompareFormats.end(), o.format) == kCompareFormats.end())
    fail(ExitCode::usage, "--format: unknown format '{}' (valid: table, md, json)", o.format);
  std::set<std::string> fields;
  for (const ComparePair& p : o.pairs)
    if (!fields.insert(p.field).second) fail(ExitCode::usage, "--pair: {} is paired twice; give one pair per field", p.field);

  const std::vector<RunRecord> before = select_side(before_in, o.pairs, false);
  const std::vector<RunRecord> after = select_side(after_in, o.pairs, true);
  std::vector<Entry> entries = match_rows(before, after);
  const auto cost = fixed_costs(before);
  CompareResult res;
  for (Entry& e : entries) {
    auto it = cost.find(match_key(any_row(e)));
    judge(e, it == cost.end() ? 0 : it->second, o);
    res.failures += e.failure;
    res.matched += e.before && e.after;
  }
  if (!o.count_isolated) res.failures -= mark_isolated(entries);
  const auto settings = differing_settings(context_before, context_after);
  Summary s{entries, o, settings, res.matched, res.failures, ""};
  if (res.matched == 0) {
    s.nothing_matched = why_nothing_matched(before, after);
    if (!o.pairs.empty()) s.nothing_matched += " (rows as paired: " + pairs_text(o) + ")";
    ++res.failures;
  }
  res.text = o.format == "json" ? render_json(s) : o.format == "md" ? render_markdown(s) : render_table(s);
  return res;
}
}  // namespace ccbench
