#pragma once
// Comparisons of bus bandwidth: between implementations within one run (the end-of-run summary)
// and between two runs (`ccbench compare before.csv after.csv`). Pure text, no I/O.
#include <string>
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

struct CompareResult {
  std::string text;     // the report, ready to print
  int regressions = 0;  // rows flagged REGRESSION
};

// Compares two runs row by row on busbw_median_gbps. Rows match on (collective, impl, transport,
// device, dtype, op, root, bytes, in_place, mode, ranks, group); a key repeated within a file is
// matched occurrence by occurrence. A matched row is a REGRESSION when both are ok and after <
// before * (1 - tolerance), or when it was ok before and is wrong or failed after. Rows found in
// one file only are listed. `tolerance` is a fraction in [0, 1) (0.05 = 5 %); anything else
// throws Error(usage).
CompareResult compare_runs(const std::vector<RunRecord>& before, const std::vector<RunRecord>& after,
                           double tolerance);

}  // namespace ccbench
