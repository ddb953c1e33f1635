#pragma once
// Comparisons of bus bandwidth: between implementations within one run (the end-of-run summary)
// and between two runs (`ccbench compare BEFORE AFTER`). Pure text, no I/O.
#include <string>
#include <utility>
#include <vector>

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
  double tolerance = 0.05;     // a fraction in [0, 1): smaller changes are never flagged
  bool allow_missing = false;  // a baseline row absent now is reported, not a failure
  bool allow_skipped = false;  // a row ok before and skipped now is reported, not a failure
  bool count_isolated = false;     // count a slowdown at one size whose neighbouring sizes are not slower
  std::vector<ComparePair> pairs;  // compare rows whose `field` differs as given (at most one per field)
  std::string format = "table";    // table, md or json
};

struct CompareResult {
  std::string text;   // the report in the chosen format, ready to print
  int failures = 0;   // slower beyond the noise, wrong/failed/skipped now, missing now, nothing matched
  int matched = 0;    // rows found in both runs
};

// Compares two runs row by row. Rows match on (collective, impl, transport, device, dtype, op,
// root, bytes, in_place, mode, ranks, group) minus the fields named in `pairs`; a key repeated
// within a file is matched occurrence by occurrence.
// Noise: a row's spread is max(time_cv, time_p95 / time_median - 1). Both rows ok: the row is
// slower only when the slowdown is above the tolerance AND above the sum of both rows' spreads.
// A slowdown at one size whose adjacent sizes (of the same case, measured on both sides) are not
// slower is reported as "at this size only" and not counted (unless count_isolated): a slower
// link or algorithm shows at neighbouring sizes too, a disturbance of one measurement does not.
// Which figure: rows whose median time is within kLatencyBoundFactor of the fastest size of the
// same case in the baseline are latency-bound and compare time_median; the others compare
// busbw_median (rows with a busbw of 0 always compare time). A row that was ok and is wrong,
// failed or (unless allow_skipped) skipped now, a baseline row missing now (unless
// allow_missing), and a comparison that matched no row at all are failures. `context_before` /
// `context_after` are run contexts (run.json's "context"); the settings that differ are printed
// on top (when both are known). Throws Error(usage) on a bad tolerance, pair field or format.
CompareResult compare_runs(const std::vector<RunRecord>& before, const std::vector<RunRecord>& after,
                           const CompareOptions& options, const Json& context_before = Json::object(),
                           const Json& context_after = Json::object());

// Sorted "key" -> value of the settings in a run context that can change a measurement: git
// commit, ccbench and library versions, command line, environment (NCCL_*, ...), hosts, ranks,
// nodes, device.
std::vector<std::pair<std::string, std::string>> context_settings(const Json& context);

// A row for people, as flagged lines name it: its case, placement and size.
std::string row_label(const RunRecord& r);

// Parses "field=before:after" (--pair); throws Error(usage) naming what is valid.
ComparePair parse_compare_pair(const std::string& text);

// How much slower than its smallest size a row's median time may be and still count as
// latency-bound: below twice the fixed cost, the fixed cost is most of the time. (On the CPU
// baseline, allreduce over shm doubles its 1 KiB time at 8-16 KiB, where its busbw curve bends.)
inline constexpr double kLatencyBoundFactor = 2.0;

}  // namespace ccbench
