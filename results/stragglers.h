#pragma once
// Stragglers: the ranks of a row that finished their part late. Every rank keeps its own times
// (RunRecord::rank_times_us, rank_median_us); these functions find the slowest rank, compare it
// with the median rank, and name the ranks that stay behind the median by more than a threshold.
// Pure functions of the rows: no MPI, no I/O.
#include <string>
#include <vector>

#include "results/attribution.h"
#include "results/record.h"

namespace ccbench {

// Default of --straggler-threshold: a rank 20 % slower than the median rank is named. Timing
// noise between CPU ranks of one host stays within a few percent at sizes of 1 KB and more.
inline constexpr double kDefaultStragglerThreshold = 0.2;

struct RankSpread {
  int slowest_rank = -1;  // -1: no times
  double slowest_us = 0;
  double median_us = 0;  // the median rank's time (the lower middle one for an even count)
  // slowest / median (1 when the median is 0: nothing to compare).
  double ratio() const { return median_us > 0 ? slowest_us / median_us : 1.0; }
};

// The slowest rank of `times_us` (one time per rank, rank order) and the median rank's time.
RankSpread rank_spread(const std::vector<double>& times_us);

// Fills the row's slowest_rank, slowest_host, rank_spread and straggler_ratio from its
// rank_median_us (each rank's median single-iteration time: single iterations start together
// after a barrier, so a rank whose part ends late shows there; back-to-back batch iterations wait
// for it and even out); `hosts` is the host of every rank (may be empty).
void fill_straggler_columns(RunRecord& row, const std::vector<std::string>& hosts);

// The lines rank 0 prints after the table: one per rank that was the slowest of at least one row
// by more than `threshold` (0.2 = 20 %) over the median rank, naming its worst row:
//   "# straggler: rank 3 (host node07) 1.35x the median rank in allreduce/ring float sum 64M
//    out-of-place (slowest by more than 20 % in 5 of 6 rows)"
// The rank behind in the most rows comes first. Empty when no rank stays behind. Where the run
// was `oversubscribed` (its description, "4 ranks on 2 hardware threads (host vm)"; "" when not),
// each line says "# straggler (oversubscribed: maybe the scheduler): ...": there a rank waiting
// for a hardware thread lags by chance, so a line is a lead, not a finding.
std::string straggler_report(const std::vector<RunRecord>& rows, double threshold,
                             const std::string& oversubscribed = "");

// ---- Sub-group runs: groups far below like groups ----

// Default of --group-outlier-threshold: a group below 90 % of the median busbw of like groups is
// an outlier.
inline constexpr double kDefaultGroupOutlierThreshold = 0.9;

// Sets group_outlier_ratio (median busbw of like groups / the row's busbw) on every measured row
// of a sub-group run (group other than "world"). Like groups: the same collective, impl, dtype,
// op, size, placement, mode and rank count; the median is the usual one (mean of the two middle
// values for an even count). Rows with no like group, or a busbw of 0, stay empty.
void mark_group_outliers(std::vector<RunRecord>& rows);

// The lines rank 0 prints after the table: one per group with at least one row below
// `threshold` (0.9 = 90 %) of the median of like groups, naming its worst row:
//   "# group outlier: pair 0-3 at 0.12 of the median busbw of 6 like groups in allreduce/ring
//    float sum 1M out-of-place (below 90 % in 4 of 4 rows)"
// Oversubscribed, each line says so, as straggler_report()'s.
std::string group_outlier_report(const std::vector<RunRecord>& rows, double threshold,
                                 const std::string& oversubscribed = "");

// ---- --groups pairs: the endpoint the slow pairs share ----

// The attribution (results/attribution.h) of each case of a pairs run: the measured rows of two
// ranks that name their link, alike but for the group (collective, impl, dtype, op, placement,
// mode), at the largest size measured, by the busbw of the median call (busbw_median; the batch
// figure where it is 0) against `threshold` (--group-outlier-threshold).
struct PairAttribution {
  std::string subject;  // "allreduce/ring float sum 1M out-of-place"
  Attribution attribution;
};
std::vector<PairAttribution> attribute_pairs(const std::vector<RunRecord>& rows, double threshold);
// Sets the `culprit` column of every row attribute_pairs() judged to its link's blame.
void mark_pair_culprits(std::vector<RunRecord>& rows, double threshold);
// The lines rank 0 prints after the group outliers ("# culprit (SUBJECT): HOST: evidence", ...).
std::string pair_attribution_report(const std::vector<RunRecord>& rows, double threshold);
// For run.json's context ("pair_attribution"): attribution_json() of each; null without pairs.
Json pair_attribution_json(const std::vector<RunRecord>& rows, double threshold);

}  // namespace ccbench
