// `ccbench history`: runs added to the store, or read back as a table of runs or one case's trend.
#include <fmt/format.h>

#include "harness/app/app.h"
#include "results/csv_reader.h"
#include "results/history.h"

namespace ccbench {

int run_history(const HistoryRequest& req) {
  History history(req.db);
  for (const std::string& path : req.add) {
    const ResultSet run = read_result_set(path);
    fmt::print("# history: {} added as run {}\n", path,
               history.append(run.context, run.rows, "imported from " + run.csv_path, 0));
  }
  if (!req.add.empty()) return 0;
  const CaseFilter& f = req.filter;
  const bool one_case = !f.collective.empty() || !f.impl.empty() || !f.transport.empty() || !f.dtype.empty() || f.bytes;
  fmt::print("{}", one_case ? trend_table(history.trend(f)) : runs_table(history.runs(f.host)));
  return 0;
}

}  // namespace ccbench
