#pragma once
// nccl-tests' NCCL_TESTS_MIN_BW: a run fails (exit code 4) when its average bus bandwidth is
// below 90% of the threshold. ccbench measures several cases in one run (collective,
// implementation, transport, dtype, op, mode), so the rule applies to each case's average.
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "results/record.h"

namespace ccbench {

// nccl-tests passes an average within 10% below the threshold.
inline constexpr double kMinBandwidthTolerance = 0.9;

struct MinBandwidthVerdict {
  ExitCode code = ExitCode::ok;  // threshold if any case fell short
  std::string report;            // '#' lines: the rule, then each case's average with OK/FAILED
};

// Judges the measured rows (skipped and failed rows carry no bandwidth) against `min_gbps`.
MinBandwidthVerdict judge_min_bandwidth(const std::vector<RunRecord>& rows, double min_gbps);

}  // namespace ccbench
