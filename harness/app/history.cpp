// `ccbench history`: runs added to the store, or read back as a table of runs or one case's trend.
#include <fmt/format.h>

#include "core/error.h"
#include "harness/app/app.h"
#include "results/csv_reader.h"
#include "results/history.h"

namespace ccbench {

namespace {

// Every run to add, read and checked before the store is touched: a damaged row refuses them all.
std::vector<ResultSet> runs_to_add(const std::vector<std::string>& paths) {
  std::vector<ResultSet> runs;
  for (const std::string& path : paths) {
    runs.push_back(read_result_set(path));
    const std::vector<std::string> damaged = damaged_rows(runs.back());
    if (damaged.empty()) continue;
    std::string list;
    for (size_t i = 0; i < damaged.size() && i < 5; ++i) list += "\n  " + damaged[i];
    if (damaged.size() > 5) list += fmt::format("\n  ... and {} more", damaged.size() - 5);
    fail(ExitCode::usage, "history --add: {} has {} row{} with impossible values; nothing added:{}", path,
         damaged.size(), damaged.size() == 1 ? "" : "s", list);
  }
  return runs;
}

int add_runs(const HistoryRequest& req) {
  const std::vector<ResultSet> runs = runs_to_add(req.add);
  History history(req.db, HistoryAccess::append);
  for (size_t i = 0; i < runs.size(); ++i) {
    const ResultSet& run = runs[i];
    const std::string verdict = !run.verdict.empty() ? run.verdict : "unknown (" + run.outcome_note + ")";
    bool stored_before = false;
    const long long id = history.append(run.context, run.rows, verdict, run.exit_code, &stored_before);
    if (stored_before) fmt::print("# history: {} is already stored as run {}; not added again\n", req.add[i], id);
    else
      fmt::print("# history: {} added as run {} ({}{})\n", req.add[i], id, verdict,
                 run.exit_code ? fmt::format(", exit code {}", *run.exit_code) : "");
  }
  return 0;
}

}  // namespace

int run_history(const HistoryRequest& req) {
  if (!req.add.empty()) return add_runs(req);
  const History history(req.db, HistoryAccess::read);
  const CaseFilter& f = req.filter;
  const bool one_case = !f.collective.empty() || !f.impl.empty() || !f.transport.empty() || !f.dtype.empty() || f.bytes;
  fmt::print("{}", one_case ? trend_table(history.trend(f)) : runs_table(history.runs(f.host)));
  return 0;
}

}  // namespace ccbench
