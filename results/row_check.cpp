#include "results/row_check.h"

#include <cmath>
#include <iterator>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace ccbench {

namespace {

// The CSV header of the record column with JSON key `key`: messages name what the file holds.
std::string header_of(std::string_view key) {
  for (const Column& c : record_columns())
    if (key == c.key) return c.csv_header;
  return std::string(key);
}

struct Figure {
  const char* key;
  double RunRecord::*member;
};
const std::vector<Figure> kFigures = {
    {"time_avg_us", &RunRecord::time_avg_us},
    {"time_median_us", &RunRecord::time_median_us},
    {"time_min_us", &RunRecord::time_min_us},
    {"time_p95_us", &RunRecord::time_p95_us},
    {"time_max_us", &RunRecord::time_max_us},
    {"time_cv", &RunRecord::time_cv},
    {"algbw_gbps", &RunRecord::algbw_gbps},
    {"busbw_gbps", &RunRecord::busbw_gbps},
    {"busbw_median_gbps", &RunRecord::busbw_median_gbps},
};

struct OptionalFigure {
  const char* key;
  std::optional<double> RunRecord::*member;
};
const std::vector<OptionalFigure> kOptionalFigures = {
    {"rank_spread", &RunRecord::rank_spread},
    {"straggler_ratio", &RunRecord::straggler_ratio},
    {"group_outlier_ratio", &RunRecord::group_outlier_ratio},
    {"link_ceiling_gbps", &RunRecord::link_ceiling_gbps},
    {"efficiency", &RunRecord::efficiency},
    {"predicted_time_us", &RunRecord::predicted_time_us},
    {"predicted_busbw_gbps", &RunRecord::predicted_busbw_gbps},
    {"model_efficiency", &RunRecord::model_efficiency},
    {"model_link_gbps", &RunRecord::model_link_gbps},
};

bool sound(double v) { return std::isfinite(v) && v >= 0; }

std::string why_not(const std::string& name, double v) {
  return std::isfinite(v) ? fmt::format("{} is negative ({:g})", name, v) : fmt::format("{} is {}", name, v);
}

void add(std::string& s, const std::string& what) { s += (s.empty() ? "" : "; ") + what; }

// Figures every row must have finite and not negative, the optional ones where present.
void check_signs(const RunRecord& r, std::string& s) {
  for (const Figure& f : kFigures)
    if (!sound(r.*f.member)) add(s, why_not(header_of(f.key), r.*f.member));
  for (const OptionalFigure& f : kOptionalFigures)
    if (r.*f.member && !sound(*(r.*f.member))) add(s, why_not(header_of(f.key), *(r.*f.member)));
  for (auto [list, key] :
       {std::pair{&RunRecord::rank_times_us, "rank_times_us"}, std::pair{&RunRecord::rank_median_us, "rank_median_us"}})
    for (double v : r.*list)
      if (!sound(v)) {
        add(s, why_not(header_of(key), v));
        break;
      }
  for (size_t i = 0; i < health_columns().size(); ++i) {
    const Json v = health_value(r.health, i);
    if (v.is_number_float() && !sound(v.get<double>()))
      add(s, why_not(health_columns()[i].csv_header, v.get<double>()));
  }
  if (r.wrong && *r.wrong < 0) add(s, fmt::format("{} is negative ({})", header_of("wrong"), *r.wrong));
  for (auto [value, key] :
       {std::pair{r.ranks, "ranks"}, std::pair{r.ranks_per_node, "ranks_per_node"}, std::pair{r.nodes, "nodes"},
        std::pair{r.warmup, "warmup"}, std::pair{r.iterations, "iterations"}})
    if (value < 0) add(s, fmt::format("{} is negative ({})", header_of(key), value));
}

// A bandwidth above `factor` * size / time, the most the row's own size and time allow.
void check_bound(const RunRecord& r, const char* bw_key, double bw, const char* time_key, double time_us, double factor,
                 std::string& s) {
  const double bound = time_us > 0 ? factor * static_cast<double>(r.bytes) / (time_us * 1e3) : 0.0;
  if (bw <= bound * (1 + kRoundingSlack)) return;
  add(s, fmt::format("{} {:g} is above {:g}, the most that size[B] {} in {} {:g} allows", header_of(bw_key), bw, bound,
                     r.bytes, header_of(time_key), time_us));
}

// What a measured row's figures say about each other.
void check_consistency(const RunRecord& r, std::string& s) {
  const Figure order[] = {{"time_min_us", &RunRecord::time_min_us},
                          {"time_median_us", &RunRecord::time_median_us},
                          {"time_p95_us", &RunRecord::time_p95_us},
                          {"time_max_us", &RunRecord::time_max_us}};
  for (size_t i = 0; i + 1 < std::size(order); ++i) {
    const double lo = r.*order[i].member, hi = r.*order[i + 1].member;
    if (lo > hi * (1 + kRoundingSlack))
      add(s, fmt::format("{} {:g} is above {} {:g}", header_of(order[i].key), lo, header_of(order[i + 1].key), hi));
  }
  if (r.iterations > 0 && r.time_cv > std::sqrt(static_cast<double>(r.iterations)) * (1 + kRoundingSlack))
    add(s, fmt::format("time_cv {:g} is above sqrt(iterations {}), the most {} samples can spread", r.time_cv,
                       r.iterations, r.iterations));
  check_bound(r, "algbw_gbps", r.algbw_gbps, "time_avg_us", r.time_avg_us, 1.0, s);
  check_bound(r, "busbw_gbps", r.busbw_gbps, "time_avg_us", r.time_avg_us, kMaxBusFactor, s);
  check_bound(r, "busbw_median_gbps", r.busbw_median_gbps, "time_median_us", r.time_median_us, kMaxBusFactor, s);
}

}  // namespace

std::string row_damage(const RunRecord& r) {
  std::string s;
  check_signs(r, s);
  if (s.empty() && row_measured(r)) check_consistency(r, s);
  return s;
}

RunRecord sealed(const RunRecord& in) {
  RunRecord r = in;
  for (const OptionalFigure& f : kOptionalFigures)
    if (r.*f.member && !sound(*(r.*f.member))) (r.*f.member).reset();
  for (std::vector<double> RunRecord::*list : {&RunRecord::rank_times_us, &RunRecord::rank_median_us})
    for (double v : r.*list)
      if (!sound(v)) {
        (r.*list).clear();
        break;
      }
  for (size_t i = 0; i < health_columns().size(); ++i) {
    const Json v = health_value(r.health, i);
    if (v.is_number_float() && !sound(v.get<double>())) set_health_value(r.health, i, nullptr);
  }
  const std::string damage = row_damage(r);
  if (damage.empty()) return r;
  for (const Figure& f : kFigures) r.*f.member = 0;
  r.status = RowStatus::failed;
  r.reason = fmt::format("impossible figures, not written ({}){}", damage, in.reason.empty() ? "" : ": " + in.reason);
  return r;
}

}  // namespace ccbench
