// `ccbench compare`: two runs, or a run against the median of its fleet (--against-fleet).
#include <fmt/format.h>

#include "core/error.h"
#include "harness/app/app.h"
#include "results/compare.h"
#include "results/csv_reader.h"
#include "results/history.h"

namespace ccbench {

int run_compare(const CompareRequest& req) {
  const ResultSet after = read_result_set(req.runs.back());
  ResultSet before = req.runs.size() > 1 ? read_result_set(req.runs.front()) : after;
  if (!req.fleet_db.empty()) {
    const History history(req.fleet_db);
    const std::string kind = node_kind(after.context), host = run_host(after.context);
    int hosts = 0;
    before.rows = history.fleet_median(kind, host, &hosts);
    before.context = Json::object();
    if (hosts == 0)
      fail(ExitCode::precondition, "compare --against-fleet: {} holds no run of another node of kind '{}' (this one: {})",
           req.fleet_db, kind, host);
    fmt::print("# against the fleet: median of the latest runs of {} other host{} of kind '{}' in {}\n", hosts,
               hosts == 1 ? "" : "s", kind, req.fleet_db);
  }
  CompareResult r = compare_runs(before.rows, after.rows, req.options, before.context, after.context);
  fmt::print("{}", r.text);
  return r.failures ? static_cast<int>(ExitCode::threshold) : 0;
}

}  // namespace ccbench
