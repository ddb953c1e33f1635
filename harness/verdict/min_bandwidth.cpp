#include "harness/verdict/min_bandwidth.h"

#include <map>
#include <tuple>

#include <fmt/format.h>

namespace ccbench {

MinBandwidthVerdict judge_min_bandwidth(const std::vector<RunRecord>& rows, double min_gbps) {
  // Case -> (sum of busbw, rows), in the order cases first appear.
  std::vector<std::string> order;
  std::map<std::string, std::pair<double, int>> cases;
  for (const RunRecord& r : rows) {
    if (r.status == RowStatus::skipped || r.status == RowStatus::failed) continue;
    std::string key = fmt::format("{} {} {} {} {} {}{}", r.collective, r.impl, r.transport, r.dtype, r.op, r.mode,
                                  r.root >= 0 ? fmt::format(" root {}", r.root) : "");
    auto [it, fresh] = cases.try_emplace(key, 0.0, 0);
    if (fresh) order.push_back(key);
    it->second.first += r.busbw_gbps;
    ++it->second.second;
  }
  MinBandwidthVerdict v;
  const double floor = min_gbps * kMinBandwidthTolerance;
  v.report = fmt::format(
      "# NCCL_TESTS_MIN_BW {} GB/s: each case's average bus bandwidth must reach {:.2f} GB/s "
      "(90%, as nccl-tests)\n",
      min_gbps, floor);
  for (const std::string& key : order) {
    const auto& [sum, n] = cases[key];
    const double avg = sum / n;
    const bool ok = avg >= floor;
    if (!ok) v.code = ExitCode::threshold;
    v.report += fmt::format("#   {:<48} {:10.3f} GB/s {}\n", key, avg, ok ? "OK" : "FAILED");
  }
  if (order.empty()) {
    v.code = ExitCode::threshold;
    v.report += "#   no measured row to judge: FAILED\n";
  }
  return v;
}

}  // namespace ccbench
