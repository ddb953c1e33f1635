// `ccbench compare BEFORE AFTER`: two runs row by row (results/compare.h has the contract).
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/size.h"
#include "results/compare.h"
#include "results/format.h"
#include "results/row_check.h"
#include "results/row_key.h"
#include "results/stats.h"

namespace ccbench {

namespace {

const std::vector<std::string> kPairFields = {"impl", "transport", "device", "dtype", "op", "mode", "group"};
const std::vector<std::string> kCompareFormats = {"table", "md", "json"};
// The MAD of a normal distribution is 0.6745 of its standard deviation: 1.4826 x MAD estimates it.
constexpr double kMadToSigma = 1.4826;

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
RowKey cycle_key(const RunRecord& r) { return placement_key(r).plus(r.cycle); }
// The same within one sweep of a repeated run (-N): rows of different cycles are never neighbours.

// A row's own spread: log(median / fastest iteration), 0 where not measured.
double own_spread(const RunRecord& r) {
  return r.time_min_us > 0 && r.time_median_us > r.time_min_us ? std::log(r.time_median_us / r.time_min_us) : 0;
}

// One side of the comparison: its rows after pairing, and where each came from.
struct Side {
  const ResultSet* set;
  std::vector<RunRecord> rows;
  std::vector<size_t> index;  // into set->rows
  std::string damage(size_t i) const {
    const std::string d = set->damage(index[i]);
    return d.empty() ? d : fmt::format("{}: {}", set->where(index[i]), d);
  }
};

enum class Verdict {
  same,
  faster,
  slower,
  isolated,
  disturbed,
  scheduled,
  damaged,
  now_bad,
  now_skipped,
  now_ok,
  not_ok,
  missing,
  extra
};

struct RowEntry {
  const RunRecord* before = nullptr;  // null: only in after
  const RunRecord* after = nullptr;   // null: missing now
  std::string damage;                 // why one side cannot be judged: "before FILE:LINE: ..."
  bool by_time = false;               // time_median shown (latency-bound), else busbw_median
  double slowdown = 0;                // log(after / before median time); 0 where not compared
  double threshold = 0;               // the slowdown beyond the shift that counts, log
  bool few_iterations = false;        // a side's spread comes from fewer than kMinIterationsForSpread
  Verdict verdict = Verdict::same;
  bool failure = false;
  bool compared() const { return verdict == Verdict::same || verdict == Verdict::faster || slower_kind(); }
  bool slower_kind() const {
    return verdict == Verdict::slower || verdict == Verdict::isolated || verdict == Verdict::disturbed ||
           verdict == Verdict::scheduled;
  }
};

const RunRecord& any_row(const RowEntry& e) { return e.before ? *e.before : *e.after; }

// Whether either run repeated its sweep (-N): then every row named says its cycle.
bool has_cycles(const std::vector<RowEntry>& entries) {
  return std::any_of(entries.begin(), entries.end(), [](const RowEntry& e) { return any_row(e).cycle > 1; });
}

// An entry's case and placement, and its cycle where the runs have several.
std::string entry_title(const RowEntry& e, bool cycles) {
  const RunRecord& r = any_row(e);
  return cycles ? fmt::format("{}  cycle {}", row_title(r), r.cycle) : row_title(r);
}

// The shown figure's after / before ratio.
double shown_ratio(const RowEntry& e) { return e.by_time ? std::exp(e.slowdown) : std::exp(-e.slowdown); }
double shift_percent(double log_ratio) { return (std::exp(log_ratio) - 1) * 100; }

// What this pair of runs says about its own noise (compare.h).
struct PairNoise {
  double shift = 0;            // median log slowdown of the matched rows
  double scatter = 0;          // robust sigma of their log slowdowns around it
  int rows = 0;                // rows both come from
  std::string oversubscribed;  // "4 ranks on 2 hardware threads (before)", or ""
  bool estimated() const { return rows >= kMinRowsForScatter; }
  // The whole run's slowdown that counts, log: the tolerance or the rows' scatter, the larger.
  double shift_threshold(double tolerance) const {
    return std::max(std::log1p(tolerance), kShiftScatterSigmas * scatter);
  }
};

std::string verdict_text(const RowEntry& e) {
  const double beyond = shift_percent(e.threshold);
  switch (e.verdict) {
    case Verdict::same: return "";
    case Verdict::faster: return "faster";
    case Verdict::slower: return fmt::format("SLOWER (beyond {:.0f}% noise/tolerance)", beyond);
    case Verdict::isolated:
      return fmt::format("{} (beyond {:.0f}%, but at this size only)", e.failure ? "SLOWER" : "slower", beyond);
    case Verdict::disturbed:
      return fmt::format("slower (beyond {:.0f}%), but disturbed: its iterations spread over {:.1f}x; run again",
                         beyond, std::exp(std::max(own_spread(*e.before), own_spread(*e.after))));
    case Verdict::scheduled: return fmt::format("slower (beyond {:.0f}%), but oversubscribed: not counted", beyond);
    case Verdict::damaged: return "DAMAGED";
    case Verdict::now_bad: return fmt::format("NOW {}", row_status_name(e.after->status));
    case Verdict::now_skipped: return e.failure ? "NOW skipped" : "now skipped (allowed)";
    case Verdict::now_ok: return "now ok";
    case Verdict::not_ok: return fmt::format("{} before and after", row_status_name(e.after->status));
    case Verdict::missing: return e.failure ? "MISSING now" : "missing now (allowed)";
    case Verdict::extra:
      return e.failure ? fmt::format("ONLY AFTER, {}", row_status_name(e.after->status)) : "only after";
  }
  return "";
}

// Per case of the baseline: the median time of its fastest ok size (the fixed cost).
std::map<RowKey, double> fixed_costs(const std::vector<RunRecord>& rows) {
  std::map<RowKey, double> cost;
  for (const RunRecord& r : rows) {
    if (r.status != RowStatus::ok || r.time_median_us <= 0 || !row_damage(r).empty()) continue;
    auto [it, fresh] = cost.emplace(placement_key(r), r.time_median_us);
    if (!fresh) it->second = std::min(it->second, r.time_median_us);
  }
  return cost;
}

// Rows ok on both sides, sound, with a time to compare.
bool comparable(const RowEntry& e) {
  return e.before && e.after && e.damage.empty() && e.before->status == RowStatus::ok &&
         e.after->status == RowStatus::ok && e.before->time_median_us > 0 && e.after->time_median_us > 0;
}

void judge_status(RowEntry& e, const CompareOptions& o) {
  const RowStatus b = e.before->status, a = e.after->status;
  if (a == RowStatus::wrong || a == RowStatus::failed) {
    e.verdict = b == a ? Verdict::not_ok : Verdict::now_bad;
    e.failure = true;
  } else if (a == RowStatus::skipped) {
    e.verdict = b == RowStatus::skipped ? Verdict::not_ok : Verdict::now_skipped;
    e.failure = b != RowStatus::skipped && !o.allow_skipped;
  } else if (b != RowStatus::ok) {
    e.verdict = Verdict::now_ok;
  }
}

// Everything but the slowdown's verdict, which needs the whole run's noise first.
void judge_row(RowEntry& e, double fixed_cost, const CompareOptions& o) {
  if (!e.after) {
    e.verdict = Verdict::missing;
    e.failure = !o.allow_missing;
    return;
  }
  if (!e.before) {  // a wrong or failed row is a failure whether or not the baseline has it
    e.verdict = Verdict::extra;
    e.failure = e.after->status == RowStatus::wrong || e.after->status == RowStatus::failed;
    return;
  }
  if (!e.damage.empty()) {
    e.verdict = Verdict::damaged;
    e.failure = true;
    return;
  }
  judge_status(e, o);
  if (!comparable(e)) return;
  const RunRecord &b = *e.before, &a = *e.after;
  e.by_time = b.busbw_median_gbps <= 0 || a.busbw_median_gbps <= 0 ||
              (fixed_cost > 0 && b.time_median_us <= kLatencyBoundFactor * fixed_cost);
  e.slowdown = std::log(a.time_median_us / b.time_median_us);
  e.few_iterations = std::min(b.iterations, a.iterations) < kMinIterationsForSpread;
}

PairNoise pair_noise(const std::vector<RowEntry>& entries) {
  std::vector<double> x;
  for (const RowEntry& e : entries)
    if (comparable(e)) x.push_back(e.slowdown);
  PairNoise n;
  n.rows = static_cast<int>(x.size());
  if (!n.estimated()) return n;
  n.shift = median_of(x);
  for (double& v : x) v = std::abs(v - n.shift);
  n.scatter = kMadToSigma * median_of(x);
  return n;
}

// The slowdown's verdict of a comparable row against the pair's noise.
void judge_slowdown(RowEntry& e, const PairNoise& n, double tolerance) {
  const double sb = e.few_iterations ? 0 : own_spread(*e.before), sa = e.few_iterations ? 0 : own_spread(*e.after);
  const double from_scatter = std::min(kScatterSigmas * n.scatter, std::log(kScatterAllowanceCap));
  e.threshold = std::max({std::log1p(tolerance), from_scatter, sb + sa});
  const double beyond = e.slowdown - n.shift;
  if (beyond > e.threshold) {
    const bool disturbed = sa > sb + std::log(kDisturbedWidening);
    e.verdict = disturbed ? Verdict::disturbed : Verdict::slower;
    e.failure = !disturbed;
  } else if (-beyond > e.threshold) {
    e.verdict = Verdict::faster;
  }
}

// A slowdown at one size whose adjacent sizes of the same case are measured and not slower is a
// disturbance of that one measurement (another process, a page fault storm), not a regression: a
// slower link or algorithm shows at neighbouring sizes too. A case of one size has the same size
// in the other placement for its neighbour. Returns how many it unflagged.
int mark_isolated(std::vector<RowEntry>& entries) {
  std::map<RowKey, std::vector<RowEntry*>> by_case;  // measured on both sides, by size
  std::map<RowKey, bool> sizes;                      // case without placement, size, placement -> slower
  auto size_key = [](const RunRecord& r, bool in_place) { return case_key(r).plus(r.bytes, in_place, r.cycle); };
  for (RowEntry& e : entries) {
    if (!e.compared()) continue;
    by_case[cycle_key(*e.before)].push_back(&e);
    sizes[size_key(*e.before, e.before->in_place)] = e.verdict == Verdict::slower;
  }
  int unflagged = 0;
  for (auto& [key, v] : by_case) {
    std::sort(v.begin(), v.end(),
              [](const RowEntry* a, const RowEntry* b) { return a->before->bytes < b->before->bytes; });
    std::vector<bool> slower(v.size());
    for (size_t i = 0; i < v.size(); ++i) slower[i] = v[i]->verdict == Verdict::slower;
    for (size_t i = 0; i < v.size(); ++i) {
      const auto twin = sizes.find(size_key(*v[i]->before, !v[i]->before->in_place));
      const bool has_neighbour = v.size() > 1 || twin != sizes.end();
      const bool neighbour_slower = v.size() > 1 ? (i > 0 && slower[i - 1]) || (i + 1 < v.size() && slower[i + 1])
                                                 : twin != sizes.end() && twin->second;
      if (!slower[i] || !has_neighbour || neighbour_slower) continue;
      v[i]->verdict = Verdict::isolated;
      v[i]->failure = false;
      ++unflagged;
    }
  }
  return unflagged;
}

// Applies the pairings: keeps the rows with the paired value and gives the after rows the
// before value, so that they match.
Side select_side(const ResultSet& set, const std::vector<ComparePair>& pairs, bool after_side) {
  Side side{&set, {}, {}};
  for (size_t i = 0; i < set.rows.size(); ++i) {
    RunRecord c = set.rows[i];
    bool keep = true;
    for (const ComparePair& p : pairs) {
      std::string& v = c.*member_of(p.field);
      keep &= v == (after_side ? p.after : p.before);
      if (after_side) v = p.before;
    }
    if (!keep) continue;
    side.rows.push_back(std::move(c));
    side.index.push_back(i);
  }
  return side;
}

std::string both_damage(const Side& before, size_t bi, const Side& after, size_t ai) {
  std::string d;
  if (const std::string x = before.damage(bi); !x.empty()) d = "before " + x;
  if (const std::string x = after.damage(ai); !x.empty()) d += (d.empty() ? "after " : "; after ") + x;
  return d;
}

std::vector<RowEntry> match_rows(const Side& before, const Side& after) {
  std::map<RowKey, std::vector<size_t>> unmatched;  // row key -> indices into after, in file order
  for (size_t i = 0; i < after.rows.size(); ++i)
    unmatched[cycle_key(after.rows[i]).plus(after.rows[i].bytes)].push_back(i);
  std::vector<RowEntry> entries;
  std::vector<bool> used(after.rows.size(), false);
  for (size_t bi = 0; bi < before.rows.size(); ++bi) {
    const RunRecord& b = before.rows[bi];
    RowEntry e;
    e.before = &b;
    auto it = unmatched.find(cycle_key(b).plus(b.bytes));
    if (it != unmatched.end() && !it->second.empty()) {
      const size_t ai = it->second.front();
      e.after = &after.rows[ai];
      e.damage = both_damage(before, bi, after, ai);
      used[ai] = true;
      it->second.erase(it->second.begin());
    }
    entries.push_back(e);
  }
  for (size_t i = 0; i < after.rows.size(); ++i)
    if (!used[i]) {
      RowEntry e;
      e.after = &after.rows[i];
      entries.push_back(e);
    }
  return entries;
}

std::string comma_joined(const std::set<std::string>& v) {
  std::string l;
  for (const auto& x : v) l += (l.empty() ? "" : ",") + x;
  return l;
}

// Why nothing matched: the fields whose sets of values differ between the two runs, each with
// the --pair that compares them.
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
    s += fmt::format("; {} is {} before and {} after", f, comma_joined(vb), comma_joined(va));
    std::set<std::string> only_b, only_a;
    std::set_difference(vb.begin(), vb.end(), va.begin(), va.end(), std::inserter(only_b, only_b.end()));
    std::set_difference(va.begin(), va.end(), vb.begin(), vb.end(), std::inserter(only_a, only_a.end()));
    if (!only_b.empty() && !only_a.empty())
      s += fmt::format(" (--pair {}={}:{} compares them)", f, *only_b.begin(), *only_a.begin());
  }
  return s.empty() ? "; the sizes, ranks, placements or collectives differ" : s;
}

// "4 ranks on 2 hardware threads" when a run put more ranks on a node than it has threads: what the
// run found at start-up (context.oversubscribed, affinity included), or for runs before it, a CPU
// run's ranks per node against the node's threads.
std::string oversubscription(const Json& c) {
  if (!c.is_object()) return "";
  if (const Json& o = c.value("oversubscribed", Json()); o.is_string()) return o.get<std::string>();
  if (c.value("device", "") != "cpu") return "";
  const Json& nodes = c.value("nodes_detail", Json::array());
  if (!nodes.is_array() || nodes.empty()) return "";
  const Json cpu = nodes[0].value("node", Json::object()).value("cpu", Json::object());
  const int threads = cpu.value("hardware_threads", 0), ranks = c.value("ranks_per_node", 0);
  return threads > 0 && ranks > threads ? fmt::format("{} ranks on {} hardware threads", ranks, threads) : "";
}

}  // namespace

// Rendering (table, md, json) in the second half of this file.
namespace {

std::string figure(const RunRecord* r, bool by_time) {
  if (!r) return "-";
  if (r->status != RowStatus::ok) return std::string(row_status_name(r->status));
  return by_time ? fmt::format("{:.3g} us", r->time_median_us) : fmt::format("{:.2f} GB/s", r->busbw_median_gbps);
}

std::string ratio_text(const RowEntry& e) { return e.compared() ? fmt::format("{:.2f}x", shown_ratio(e)) : "-"; }
std::string noise_text(const RowEntry& e) {
  return e.compared() ? fmt::format("{:.0f}%{}", shift_percent(e.threshold), e.few_iterations ? "*" : "") : "-";
}

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
  const std::vector<RowEntry>& entries;
  const CompareOptions& o;
  const std::vector<std::pair<std::string, std::array<std::string, 2>>>& settings;
  const PairNoise& noise;
  int matched, failures;
  bool shift_counted;             // the whole run is slower beyond the tolerance on a dedicated machine
  bool cycles;                    // a run repeated its sweep: rows are named with their cycle
  std::string nothing_matched;    // non-empty: why no row matched
  std::vector<std::string> gaps;  // rows missing now or only after, one line per case
};

std::string pairs_text(const CompareOptions& o) {
  std::string s;
  for (const ComparePair& p : o.pairs)
    s += fmt::format("{}{} {} -> {}", s.empty() ? "" : ", ", p.field, p.before, p.after);
  return s;
}

std::string verdict_line(const Summary& s) {
  if (!s.nothing_matched.empty()) return "FAILED: no row matched" + s.nothing_matched;
  return fmt::format("{}: {} failure{} in {} matched row{} (tolerance {:g}%, noise-aware)",
                     s.failures ? "FAILED" : "OK", s.failures, s.failures == 1 ? "" : "s", s.matched,
                     s.matched == 1 ? "" : "s", s.o.tolerance * 100);
}

// The whole run's ratio, when it is beyond the tolerance, and the rows' scatter around it.
std::string shift_line(const Summary& s) {
  const PairNoise& n = s.noise;
  if (!n.estimated())
    return fmt::format(
        "too few rows ({} compared, {} needed) to tell the whole run's shift and scatter; rows are "
        "judged by the tolerance and their own spread",
        n.rows, kMinRowsForScatter);
  const bool capped = kScatterSigmas * n.scatter > std::log(kScatterAllowanceCap);
  std::string l = fmt::format(
      "the rows' median time changed {:.2f}x (median of {} rows); they scatter {:.0f}% around "
      "it (robust sigma), and a row counts beyond {:g} of that{}, the whole run beyond {:.0f}%",
      std::exp(n.shift), n.rows, shift_percent(n.scatter), kScatterSigmas,
      capped ? fmt::format(" (at most {:g}x: so wide a scatter comes from rows that moved)", kScatterAllowanceCap) : "",
      shift_percent(n.shift_threshold(s.o.tolerance)));
  if (std::abs(n.shift) <= std::log1p(s.o.tolerance)) return l;
  l += fmt::format(
      ". The whole run is {:.2f}x {}: every row alike, so the machine (or what every row shares), not a row",
      std::exp(n.shift), n.shift > 0 ? "slower" : "faster");
  if (s.shift_counted) l += "; a failure";
  else if (n.shift > 0 && !n.oversubscribed.empty())
    l += fmt::format("; not a failure: {}, where figures follow the scheduler", n.oversubscribed);
  else if (n.shift > 0)
    l += fmt::format(
        "; not a failure: inside the rows' scatter ({:.0f}%), which two runs of one command on this "
        "machine move by as a whole",
        shift_percent(n.scatter));
  return l;
}

// What an oversubscribed run's figures can and cannot say, or "".
std::string oversubscribed_line(const Summary& s) {
  if (s.noise.oversubscribed.empty()) return "";
  return fmt::format(
      "oversubscribed ({}): the times follow the scheduler, not the hardware, so slowdowns are shown "
      "and not counted; wrong, failed, skipped, missing and damaged rows are. For a performance "
      "verdict, compare runs with a rank per hardware thread at most",
      s.noise.oversubscribed);
}

std::string failure_lines(const Summary& s, const char* prefix) {
  std::string out;
  if (s.shift_counted)
    out += fmt::format("{}SLOWER: the whole run, {:.2f}x the time of every row (the machine, not a row)\n", prefix,
                       std::exp(s.noise.shift));
  for (const RowEntry& e : s.entries) {
    if (!e.failure || !e.before || !e.after) continue;
    const std::string why = e.verdict == Verdict::damaged ? "DAMAGED (" + e.damage + ")" : verdict_text(e);
    out += fmt::format("{}{}: {}  ({} -> {})\n", prefix, why, row_label(any_row(e), s.cycles),
                       figure(e.before, e.by_time), figure(e.after, e.by_time));
  }
  for (const std::string& g : s.gaps)
    if (g.rfind("MISSING", 0) == 0 || g.rfind("ONLY AFTER", 0) == 0) out += prefix + g + "\n";
  return out;
}

std::string render_table(const Summary& s) {
  std::string out =
      "# ccbench compare: before -> after. Latency-bound sizes show the median time, the others the "
      "median busbw; 'noise' is the change beyond the whole run's that counts (tolerance, scatter of "
      "the rows or their own spread; * = from too few iterations to tell a spread)\n";
  if (!s.nothing_matched.empty()) {
    out += "# " + verdict_line(s) + "\n";
    const auto before_only =
        std::count_if(s.entries.begin(), s.entries.end(), [](const RowEntry& e) { return e.before; });
    out += fmt::format("# {} row{} before, {} after: none with the same case and size in both\n", before_only,
                       before_only == 1 ? "" : "s", s.entries.size() - static_cast<size_t>(before_only));
  }
  if (!s.o.pairs.empty()) out += "# pairing: " + pairs_text(s.o) + "\n";
  if (!s.settings.empty()) out += "# settings that differ:\n";
  for (const auto& [k, v] : s.settings) out += fmt::format("#   {}: {} -> {}\n", k, v[0], v[1]);
  if (s.nothing_matched.empty()) out += "# " + shift_line(s) + "\n";
  if (const std::string l = oversubscribed_line(s); !l.empty()) out += "# " + l + "\n";
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::vector<std::string>>> blocks;
  for (const RowEntry& e : s.entries) {
    if (!e.before || !e.after) continue;
    const std::string t = entry_title(e, s.cycles);
    if (!blocks.count(t)) order.push_back(t);
    blocks[t].push_back({human_size(any_row(e).bytes), e.by_time ? "time" : "busbw", figure(e.before, e.by_time),
                         figure(e.after, e.by_time), ratio_text(e), noise_text(e), verdict_text(e)});
  }
  for (const std::string& t : order)
    out += "#\n# " + t + "\n" +
           aligned_columns({{"size", "figure", "before", "after", "ratio", "noise", ""}}, blocks[t], "  ", true);
  if (!s.gaps.empty()) out += "#\n# rows of one run only:\n";
  for (const std::string& g : s.gaps) out += "#   " + g + "\n";
  if (const std::string f = failure_lines(s, "# "); !f.empty()) out += "#\n# failures:\n" + f;
  return out + "#\n# " + verdict_line(s) + "\n";
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : single_line(s)) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string render_markdown(const Summary& s) {
  std::string out = "# ccbench compare\n\n" + md_cell(verdict_line(s)) + "\n\n";
  if (s.nothing_matched.empty()) out += md_cell(shift_line(s)) + "\n\n";
  if (const std::string l = oversubscribed_line(s); !l.empty()) out += md_cell(l) + "\n\n";
  if (!s.o.pairs.empty()) out += "Pairing: " + md_cell(pairs_text(s.o)) + "\n\n";
  if (!s.settings.empty()) {
    out += "| setting | before | after |\n|---|---|---|\n";
    for (const auto& [k, v] : s.settings)
      out += fmt::format("| {} | {} | {} |\n", md_cell(k), md_cell(v[0]), md_cell(v[1]));
    out += "\n";
  }
  out += "| case | size | figure | before | after | ratio | noise | verdict |\n|---|---|---|---|---|---|---|---|\n";
  for (const RowEntry& e : s.entries) {
    if (!e.before || !e.after) continue;
    const std::string v = e.verdict == Verdict::damaged ? "DAMAGED (" + e.damage + ")" : verdict_text(e);
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", md_cell(entry_title(e, s.cycles)),
                       human_size(any_row(e).bytes), e.by_time ? "time" : "busbw", figure(e.before, e.by_time),
                       figure(e.after, e.by_time), ratio_text(e), noise_text(e),
                       e.failure ? "**" + md_cell(v) + "**" : md_cell(v));
  }
  if (!s.gaps.empty()) out += "\nRows of one run only:\n\n";
  for (const std::string& g : s.gaps) out += "- " + md_cell(g) + "\n";
  return out;
}

std::string render_json(const Summary& s) {
  Json j;
  j["ok"] = s.failures == 0 && s.nothing_matched.empty();
  j["verdict"] = verdict_line(s);
  j["failures"] = s.failures;
  j["matched"] = s.matched;
  j["tolerance"] = s.o.tolerance;
  j["whole_run"] = {{"ratio", s.noise.estimated() ? Json(std::exp(s.noise.shift)) : Json(nullptr)},
                    {"scatter", s.noise.estimated() ? Json(std::expm1(s.noise.scatter)) : Json(nullptr)},
                    {"rows", s.noise.rows},
                    {"oversubscribed", s.noise.oversubscribed.empty() ? Json(nullptr) : Json(s.noise.oversubscribed)},
                    {"failure", s.shift_counted}};
  j["pairs"] = Json::array();
  for (const ComparePair& p : s.o.pairs)
    j["pairs"].push_back({{"field", p.field}, {"before", p.before}, {"after", p.after}});
  j["settings_differ"] = Json::object();
  for (const auto& [k, v] : s.settings) j["settings_differ"][k] = {{"before", v[0]}, {"after", v[1]}};
  j["rows"] = Json::array();
  for (const RowEntry& e : s.entries) {
    Json r = {{"case", row_title(any_row(e))},
              {"cycle", any_row(e).cycle},
              {"figure", e.by_time ? "time_median_us" : "busbw_median_gbps"},
              {"before", e.before ? Json(to_json(*e.before)) : Json(nullptr)},
              {"after", e.after ? Json(to_json(*e.after)) : Json(nullptr)},
              {"ratio", e.compared() ? Json(shown_ratio(e)) : Json(nullptr)},
              {"threshold", e.compared() ? Json(std::expm1(e.threshold)) : Json(nullptr)},
              {"verdict", verdict_text(e)},
              {"damage", e.damage.empty() ? Json(nullptr) : Json(e.damage)},
              {"failure", e.failure}};
    j["rows"].push_back(std::move(r));
  }
  return j.dump(2) + "\n";
}

// Rows of one run only, one line per case and kind: "MISSING now: <case>: 19 sizes, 8 B - 2 MiB".
std::vector<std::string> gap_lines(const std::vector<RowEntry>& entries) {
  struct Gap {
    std::string what;
    std::vector<std::uint64_t> sizes;
  };
  std::vector<std::string> order;
  std::map<std::string, Gap> gaps;
  const bool cycles = has_cycles(entries);
  for (const RowEntry& e : entries) {
    if (e.before && e.after) continue;
    const std::string key = verdict_text(e) + "\x1f" + entry_title(e, cycles);
    if (!gaps.count(key)) order.push_back(key);
    Gap& g = gaps[key];
    g.what = fmt::format("{}: {}", verdict_text(e), entry_title(e, cycles));
    g.sizes.push_back(any_row(e).bytes);
  }
  std::vector<std::string> out;
  for (const std::string& k : order) {
    const auto [lo, hi] = std::minmax_element(gaps[k].sizes.begin(), gaps[k].sizes.end());
    const size_t n = gaps[k].sizes.size();
    out.push_back(n == 1 ? fmt::format("{}  size {}", gaps[k].what, human_size(*lo))
                         : fmt::format("{}  {} sizes, {} - {}", gaps[k].what, n, human_size(*lo), human_size(*hi)));
  }
  return out;
}

}  // namespace

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
  if (p.before.empty() || p.after.empty() ||
      std::find(kPairFields.begin(), kPairFields.end(), p.field) == kPairFields.end())
    fail(ExitCode::usage,
         "--pair: '{}' is not valid; expected FIELD=BEFORE:AFTER with FIELD one of {} (e.g. impl=ring:nccl)", text,
         valid);
  return p;
}

namespace {

// What the nodes bring that changes rows without any option saying so: the CPU reductions' vector
// set (fp8 rows 2x apart between AVX-512 BW and VBMI) and the kernel's TCP buffer defaults (ofi
// over tcp 0.64-0.84 against 0.91-0.94 of our tcp, evidence cpu2core-20261205-ofi-tcp-buffers).
// One entry each, the nodes' distinct values joined ("node.tcp.tcp_rmem": "4096 131072 6291456").
void add_node_settings(const Json& c, std::map<std::string, std::string>& out) {
  const Json& nodes = c.value("nodes_detail", Json::array());
  if (!nodes.is_array()) return;
  const std::pair<const char*, const char*> kSettings[] = {
      {"cpu", "reduce_vector_set"}, {"tcp", "tcp_rmem"}, {"tcp", "tcp_wmem"}};
  for (const auto& [part, key] : kSettings) {
    std::set<std::string> values;
    for (const Json& n : nodes) {
      const Json v = n.value("node", Json::object()).value(part, Json::object()).value(key, Json());
      if (v.is_string()) values.insert(v.get<std::string>());
      else if (v.is_array()) values.insert(fmt::format("{}", fmt::join(v.get<std::vector<long long>>(), " ")));
    }
    if (!values.empty()) out[fmt::format("node.{}.{}", part, key)] = comma_joined(values);
  }
}

}  // namespace

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
    out["hosts"] = comma_joined(hosts);
  }
  add_node_settings(c, out);
  return {out.begin(), out.end()};
}

namespace {

void check_options(const CompareOptions& o) {
  if (!(o.tolerance >= 0 && o.tolerance < 1))
    fail(ExitCode::usage, "tolerance must be a fraction in [0, 1), for example 0.05 for 5%; got {}", o.tolerance);
  if (std::find(kCompareFormats.begin(), kCompareFormats.end(), o.format) == kCompareFormats.end())
    fail(ExitCode::usage, "--format: unknown format '{}' (valid: table, md, json)", o.format);
  std::set<std::string> fields;
  for (const ComparePair& p : o.pairs)
    if (!fields.insert(p.field).second)
      fail(ExitCode::usage, "--pair: {} is paired twice; give one pair per field", p.field);
}

}  // namespace

CompareResult compare_runs(const ResultSet& before_set, const ResultSet& after_set, const CompareOptions& o) {
  check_options(o);
  const Side before = select_side(before_set, o.pairs, false);
  const Side after = select_side(after_set, o.pairs, true);
  std::vector<RowEntry> entries = match_rows(before, after);
  const auto cost = fixed_costs(before.rows);
  for (RowEntry& e : entries) {
    auto it = cost.find(placement_key(any_row(e)));
    judge_row(e, it == cost.end() ? 0 : it->second, o);
  }
  PairNoise noise = pair_noise(entries);
  noise.oversubscribed = oversubscription(before_set.context);
  if (noise.oversubscribed.empty()) noise.oversubscribed = oversubscription(after_set.context);
  for (RowEntry& e : entries)
    if (comparable(e)) judge_slowdown(e, noise, o.tolerance);
  CompareResult res;
  if (!o.count_isolated) mark_isolated(entries);
  if (!noise.oversubscribed.empty())  // figures that follow the scheduler: shown, never counted
    for (RowEntry& e : entries)
      if (e.verdict == Verdict::slower) {
        e.verdict = Verdict::scheduled;
        e.failure = false;
      }
  for (const RowEntry& e : entries) {
    res.failures += e.failure;
    res.matched += e.before && e.after;
  }
  const bool shift_counted =
      noise.estimated() && noise.shift > noise.shift_threshold(o.tolerance) && noise.oversubscribed.empty();
  res.failures += shift_counted;
  const auto settings = differing_settings(before_set.context, after_set.context);
  Summary s{entries,           o, settings, noise, res.matched, res.failures, shift_counted, has_cycles(entries), "",
            gap_lines(entries)};
  if (res.matched == 0) {
    s.nothing_matched = why_nothing_matched(before.rows, after.rows);
    if (!o.pairs.empty()) s.nothing_matched += " (rows as paired: " + pairs_text(o) + ")";
    s.gaps.clear();  // every row is in one run only: the reason says why
    res.failures = s.failures = 1;
  }
  res.text = o.format == "json" ? render_json(s) : o.format == "md" ? render_markdown(s) : render_table(s);
  return res;
}

}  // namespace ccbench
