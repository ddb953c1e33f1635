#pragma once
// Comparisons of bus bandwidth: between implementations within one run (the end-of-run summary)
// and between two runs (`ccbench compare BEFORE AFTER`). Pure text, no I/O.
#include <string>
#include <utility>
#include <vector>

#include "results/csv_reader.h"
#include "results/record.h"

namespace ccbench {

// The end-of-run summary: one block per (collective, dtype, op, mode, placement, ranks, ranks per
// node, device, root, group), one row per size (ascending), one column per implementation in
// order of first appearance (impl/transport where one implementation ran over several transports).
// A cell is the busbw in GB/s (`busbw_median_gbps` if `use_median`, else `busbw_gbps`) and, beside
// it, the ratio to the `baseline` implementation at the same size: "312.40 (1.04x)". With the
// batch figure (!use_median), the median iteration's busbw follows where it differs from the
// batch by more than 10%: "0.49 (1.02x) p50 0.31". Rows that
// were not measured show their status (wrong, skipped, failed), absent ones "-". Blocks with a
// single column are left out; a block without the baseline shows no ratios. Every line
// starts with '#'. Returns "" when there is nothing to compare.
std::string comparison_table(const std::vector<RunRecord>& rows, const std::string& baseline, bool use_median);

struct ComparePair {
  std::string field;          // impl, transport, device, dtype, op, mode or group
  std::string before, after;  // the value in the earlier rows and the value it is compared with
};

struct CompareOptions {
  double tolerance = 0.05;         // a fraction in [0, 1): smaller changes are never flagged
  bool allow_missing = false;      // a baseline row absent now is reported, not a failure
  bool allow_skipped = false;      // a row ok before and skipped now is reported, not a failure
  bool count_isolated = false;     // count a slowdown at one size whose neighbouring sizes are not slower
  std::vector<ComparePair> pairs;  // compare rows whose `field` differs as given (at most one per field)
  std::string format = "table";    // table, md or json
};

struct CompareResult {
  std::string text;  // the report in the chosen format, ready to print
  int failures = 0;  // rows slower beyond the noise, wrong/failed/skipped/missing/damaged now, a
                     // whole-run slowdown of a dedicated machine, nothing matched
  int matched = 0;   // rows found in both runs
};

// Compares two runs row by row (kept in results/compare_runs.cpp). Rows match on (collective,
// impl, transport, device, dtype, op, root, bytes, in_place, mode, ranks, group, cycle) minus the
// fields named in `pairs`: cycle k of a repeated run (-N) with cycle k of the other, so that every
// cycle is judged; a key repeated within a file and cycle is matched occurrence by occurrence.
// Where a run has several cycles, every row named says its cycle.
//
// Values first: a row with impossible values (results/row_check.h) on either side is not judged
// but DAMAGED, a failure naming its file and line.
//
// Which figure: rows whose median time is within kLatencyBoundFactor of the fastest size of the
// same case in the baseline are latency-bound and show time_median; the others show
// busbw_median (rows with a busbw of 0 always time). Both say the same: a row's slowdown is its
// median time after / before.
//
// Noise, each part robust to a few outliers:
//   - the whole run: the median slowdown over the matched rows (the shift) and the rows'
//     scatter around it (1.4826 x the median absolute deviation of the log ratios: a robust
//     standard deviation, which no single row can blow up); from kMinRowsForScatter rows on;
//   - a row's own spread: log(median / fastest iteration) on each side. A slow outlier (a
//     preempted iteration) cannot widen it; fewer than kMinIterationsForSpread iterations make
//     it no estimate, which the report notes.
// A row is slower when its slowdown beyond the shift exceeds the largest of the tolerance,
// kScatterSigmas scatters and both rows' spreads. It is then not counted (but reported) when it
// is disturbed (the slower side's median more than kDisturbedWidening times as far above its
// fastest iteration as the faster side's, as interference leaves a row; a slower link or
// algorithm moves every iteration alike), or at one size only (the adjacent sizes of the same
// case, where measured on both sides, not slower; for a case of one size, the same size in the
// other placement; a case with neither counts; count_isolated counts them all).
// The shift itself is told apart from the rows: "the whole run 0.52x: every row alike, the
// machine (or what every row shares), not a row". A shift slower than the tolerance and than
// kShiftScatterSigmas of the rows' scatter is one failure: a machine whose rows move that much
// between two runs of one command moves that much as a whole too.
// Where either run was oversubscribed (more ranks than hardware threads on a node, from the run
// contexts) the figures follow the scheduler rather than the hardware: slowdowns, of rows and of
// the whole run, are shown and not counted, and the report says so.
// A row that was ok and is wrong, failed or (unless allow_skipped) skipped now, a row of the later
// run only that is wrong or failed, a baseline row missing now (unless allow_missing; reported
// per case, not per row) and a comparison that matched no row at all (its reason and the --pair
// that would match first) are failures.
// The runs' contexts (ResultSet::context) give the settings that differ, printed on top (when
// both are known). Throws Error(usage) on a bad tolerance, pair field or format.
CompareResult compare_runs(const ResultSet& before, const ResultSet& after, const CompareOptions& options);

// The noise model's constants (see compare_runs). kScatterSigmas was chosen on the two 4-rank
// runs of one command of evidence cpu2core-20261130-np4-np8: at 3 sigmas (27 %) run 2 -> run 1
// flags 2 rows, at 4 (37 %) no row in either direction, nor on its 8-rank pair; what 4 still
// detects there is reports.compare_detection's. The oversubscribed pairs of evidence
// cpu2core-20261201-compare scatter 99-221 %, hence their rule. The others are judgements:
inline constexpr int kMinRowsForScatter = 8;       // a median deviation of fewer rows follows any one of them
inline constexpr double kScatterSigmas = 4.0;      // rows beyond 4 robust sigmas of the pair's scatter count
inline constexpr int kMinIterationsForSpread = 5;  // a median and a minimum of fewer say nothing of a spread
inline constexpr double kDisturbedWidening = 2.0;  // a slower median twice as far above its fastest iteration
// The whole run counts beyond 1.5 robust sigmas of the rows' scatter (and the tolerance): five runs
// of one 2-rank command on the loaded 2-core machine, every ordered pair compared (evidence
// cpu2core-20261202-whole-run): their rows scattered 10-21 % and the runs differed as a whole by
// up to 1.17x, 1.2 scatters; the tolerance alone failed 5 of the 20 pairs, one scatter 2, 1.5
// scatters none. A real slowdown of the whole run (1.5x on a pair scattering 8 %,
// reports.compare_detection) stays far beyond it.
inline constexpr double kShiftScatterSigmas = 1.5;
// A row's allowance from the scatter stops at 3x the whole run's shift: the scatter is a median
// deviation of the rows, so where a third or more of them really moved together (a slower link
// slows every bandwidth-bound size) it grows with them and takes the change for noise. Two hosts
// of a cluster in a box, one shaped to 1 Gbit/s, float 8 B to 4 MiB: 14 of 40 rows 12x slower, a
// scatter of 102 %, 4 of it 16.7x, and no row failed. Rows of runs not oversubscribed need far
// less (82 % on the noisiest pair above); a row's own spread still widens its allowance.
inline constexpr double kScatterAllowanceCap = 3.0;

// Sorted "key" -> value of the settings in a run context that can change a measurement: git
// commit, ccbench and library versions, command line, environment (NCCL_*, ...), hosts, ranks,
// nodes, device, and the nodes' CPU reduction vector set and kernel TCP buffers (node.*).
std::vector<std::pair<std::string, std::string>> context_settings(const Json& context);

// Parses "field=before:after" (--pair); throws Error(usage) naming what is valid.
ComparePair parse_compare_pair(const std::string& text);

// How much slower than its smallest size a row's median time may be and still count as
// latency-bound: below twice the fixed cost, the fixed cost is most of the time. (On the CPU
// baseline, allreduce over shm doubles its 1 KiB time at 8-16 KiB, where its busbw curve bends.)
inline constexpr double kLatencyBoundFactor = 2.0;

}  // namespace ccbench
