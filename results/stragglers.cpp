#include "results/stragglers.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/size.h"
#include "results/format.h"
#include "results/row_key.h"
#include "results/stats.h"

namespace ccbench {

RankSpread rank_spread(const std::vector<double>& times_us) {
  RankSpread s;
  if (times_us.empty()) return s;
  const auto slowest = std::max_element(times_us.begin(), times_us.end());
  s.slowest_rank = static_cast<int>(slowest - times_us.begin());
  s.slowest_us = *slowest;
  std::vector<double> sorted = times_us;
  const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>((sorted.size() - 1) / 2);
  std::nth_element(sorted.begin(), middle, sorted.end());
  s.median_us = *middle;
  return s;
}

void fill_straggler_columns(RunRecord& row, const std::vector<std::string>& hosts) {
  const RankSpread s = rank_spread(row.rank_median_us);
  if (s.slowest_rank < 0) return;
  row.slowest_rank = s.slowest_rank;
  if (static_cast<size_t>(s.slowest_rank) < hosts.size()) row.slowest_host = hosts[static_cast<size_t>(s.slowest_rank)];
  row.straggler_ratio = s.ratio();
  row.rank_spread = s.ratio() - 1.0;
}

namespace {

// The rows a rank or group was behind in, and the worst of them by `ratio` (larger is worse).
struct Behind {
  int rows = 0;
  const RunRecord* worst = nullptr;
  void add(const RunRecord& r, std::optional<double> RunRecord::*ratio) {
    ++rows;
    if (!worst || *(r.*ratio) > *(worst->*ratio)) worst = &r;
  }
};

std::string straggler_lines(const std::vector<RunRecord>& rows, double threshold) {
  std::map<std::pair<std::string, int>, Behind> behind;  // (group, rank) -> rows it was behind in
  std::map<std::string, int> timed;                      // group -> rows with per-rank times
  for (const RunRecord& r : rows) {
    if (!r.straggler_ratio || !r.slowest_rank) continue;
    ++timed[r.group];
    if (*r.straggler_ratio <= 1.0 + threshold) continue;
    behind[{r.group, *r.slowest_rank}].add(r, &RunRecord::straggler_ratio);
  }
  // The rank behind in the most rows first: a real straggler is behind in most rows, noise of
  // shared cores in a few rows of every rank.
  std::vector<std::pair<std::pair<std::string, int>, Behind>> ranked(behind.begin(), behind.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second.rows > b.second.rows; });
  std::string out;
  for (const auto& [key, b] : ranked) {
    const RunRecord& w = *b.worst;
    out += fmt::format(
        "# straggler: rank {}{} {:.2f}x the median rank in {} (slowest by more than {:.0f} % in {} of {} rows)\n",
        key.second, w.slowest_host.empty() ? "" : fmt::format(" (host {})", w.slowest_host), *w.straggler_ratio,
        row_words(w), threshold * 100, b.rows, timed[key.first]);
  }
  return out;
}

bool measured(const RunRecord& r) { return r.status == RowStatus::ok || r.status == RowStatus::wrong; }

}  // namespace

void mark_group_outliers(std::vector<RunRecord>& rows) {
  std::map<RowKey, std::vector<double>> busbw;  // like key -> busbw of every group
  for (const RunRecord& r : rows)
    if (measured(r) && r.group != "world") busbw[group_peer_key(r)].push_back(r.busbw_gbps);
  for (RunRecord& r : rows) {
    if (!measured(r) || r.group == "world" || r.busbw_gbps <= 0) continue;
    const std::vector<double>& like = busbw[group_peer_key(r)];
    if (like.size() < 2) continue;
    r.group_outlier_ratio = median_of(like) / r.busbw_gbps;
  }
}

namespace {

std::string group_outlier_lines(const std::vector<RunRecord>& rows, double threshold) {
  std::map<std::string, Behind> below;   // group -> rows below the threshold
  std::map<std::string, int> compared;   // group -> rows compared with like groups
  std::map<RowKey, int> groups_per_key;  // like key -> groups compared
  for (const RunRecord& r : rows)
    if (r.group_outlier_ratio) ++groups_per_key[group_peer_key(r)];
  for (const RunRecord& r : rows) {
    if (!r.group_outlier_ratio) continue;
    ++compared[r.group];
    if (*r.group_outlier_ratio * threshold <= 1.0) continue;  // busbw >= threshold * median
    below[r.group].add(r, &RunRecord::group_outlier_ratio);
  }
  std::string out;
  for (const auto& [group, b] : below) {
    const RunRecord& w = *b.worst;
    out += fmt::format(
        "# group outlier: {} at {:.3g} of the median busbw of {} like groups in {} (below {:.0f} % in {} of {} rows)\n",
        group, 1.0 / *w.group_outlier_ratio, groups_per_key[group_peer_key(w)], row_words(w, false), threshold * 100,
        b.rows, compared[group]);
  }
  return out;
}

// The rows of one pairs case at its largest size, and that case's name.
struct PairCase {
  std::string subject;
  std::vector<const RunRecord*> rows;
};

std::vector<PairCase> pair_cases(const std::vector<RunRecord>& rows) {
  auto at_size_0 = [](const RunRecord& r) {  // a pairs row as its case: a group's peers at size 0
    RunRecord k = r;
    k.bytes = 0;
    return k;
  };
  auto is_pair = [](const RunRecord& r) {
    return measured(r) && r.ranks == 2 && !r.link.empty() && r.group != "world";
  };
  std::map<RowKey, std::uint64_t> largest;  // case -> largest size
  for (const RunRecord& r : rows) {
    if (!is_pair(r)) continue;
    std::uint64_t& l = largest[group_peer_key(at_size_0(r))];
    l = std::max(l, r.bytes);
  }
  // Listed by name: the case's words at size 0, then ranks and root.
  std::map<std::string, PairCase> cases;
  for (const RunRecord& r : rows) {
    if (!is_pair(r)) continue;
    const RunRecord at0 = at_size_0(r);
    if (r.bytes != largest[group_peer_key(at0)]) continue;
    PairCase& c = cases[fmt::format("{}|{}|{}", row_words(at0, false), r.ranks, r.root)];
    c.subject = row_words(r, false);
    c.rows.push_back(&r);
  }
  std::vector<PairCase> out;
  for (auto& [name, c] : cases) out.push_back(std::move(c));
  return out;
}

// Where the run was oversubscribed, every line of `kind` ("straggler") says it may be the
// scheduler's doing: "# straggler (oversubscribed: maybe the scheduler): rank 2 ...".
std::string downgraded(std::string lines, const std::string& kind, const std::string& oversubscribed) {
  if (oversubscribed.empty()) return lines;
  const std::string from = "# " + kind + ": ", to = "# " + kind + " (oversubscribed: maybe the scheduler): ";
  for (size_t at = lines.find(from); at != std::string::npos; at = lines.find(from, at + to.size()))
    lines.replace(at, from.size(), to);
  return lines;
}

}  // namespace

std::vector<PairAttribution> attribute_pairs(const std::vector<RunRecord>& rows, double threshold) {
  std::vector<PairAttribution> out;
  for (const PairCase& c : pair_cases(rows)) {
    std::vector<LinkSample> samples;
    for (const RunRecord* r : c.rows)
      if (const auto ends = link_endpoints(r->link)) {
        // The median call's busbw: a loaded host's stray delays move the batch average of a
        // healthy pair as far as a slow link (4 CPU ranks on 2 busy cores: 32 ms against 103),
        // its median call least (47 us against 103 ms).
        const double busbw = r->busbw_median_gbps > 0 ? r->busbw_median_gbps : r->busbw_gbps;
        samples.push_back({r->link, ends->first, ends->second, busbw, false});
      }
    if (!samples.empty()) out.push_back({c.subject, attribute_by_value(samples, threshold)});
  }
  return out;
}

void mark_pair_culprits(std::vector<RunRecord>& rows, double threshold) {
  const std::vector<PairAttribution> judged = attribute_pairs(rows, threshold);
  for (RunRecord& r : rows) {
    r.culprit.clear();
    for (const PairAttribution& a : judged)
      if (a.subject == row_words(r, false) && measured(r) && r.group != "world")
        r.culprit = a.attribution.blame_of(r.link);
  }
}

std::string pair_attribution_report(const std::vector<RunRecord>& rows, double threshold) {
  std::string out;
  for (const PairAttribution& a : attribute_pairs(rows, threshold))
    out += attribution_text(a.attribution, a.subject, "# ");
  return out;
}

Json pair_attribution_json(const std::vector<RunRecord>& rows, double threshold) {
  const std::vector<PairAttribution> judged = attribute_pairs(rows, threshold);
  if (judged.empty()) return nullptr;
  Json out = Json::array();
  for (const PairAttribution& a : judged) out.push_back(attribution_json(a.attribution, a.subject));
  return out;
}

std::string straggler_report(const std::vector<RunRecord>& rows, double threshold, const std::string& oversubscribed) {
  return downgraded(straggler_lines(rows, threshold), "straggler", oversubscribed);
}

std::string group_outlier_report(const std::vector<RunRecord>& rows, double threshold,
                                 const std::string& oversubscribed) {
  return downgraded(group_outlier_lines(rows, threshold), "group outlier", oversubscribed);
}

}  // namespace ccbench
