// `ccbench compare`: two runs, or a run against the median of its fleet (--against-fleet).
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "harness/app/app.h"
#include "results/compare.h"
#include "results/csv_reader.h"
#include "results/history.h"

namespace ccbench {

namespace {

// The fleet's median rows (of every cycle of the other hosts' runs alike) once for every cycle of
// `after` (-N): each cycle of the node is judged against the fleet.
ResultSet for_every_cycle(ResultSet fleet, const ResultSet& after) {
  std::set<int> cycles;
  for (const RunRecord& r : after.rows) cycles.insert(r.cycle);
  std::vector<RunRecord> rows;
  for (int c : cycles)
    for (RunRecord r : fleet.rows) {
      r.cycle = c;
      rows.push_back(std::move(r));
    }
  fleet.rows = std::move(rows);
  return fleet;
}

// The median of the latest runs of the other hosts of `after`'s kind in the history `db`.
ResultSet fleet_of(const ResultSet& after, const std::string& db) {
  const History history(db, HistoryAccess::read);
  const std::string kind = node_kind(after.context), host = run_host(after.context);
  int hosts = 0, damaged = 0;
  ResultSet fleet;
  fleet.csv_path = history.label();
  fleet.rows = history.fleet_median(kind, host, &hosts, &damaged);
  if (hosts == 0)
    fail(ExitCode::precondition, "compare --against-fleet: {} holds no run of another node of kind '{}' (this one: {})",
         history.label(), kind, host);
  fmt::print("# against the fleet: median of the latest runs of {} other host{} of kind '{}' in {}\n", hosts,
             hosts == 1 ? "" : "s", kind, history.label());
  if (damaged > 0)
    fmt::print("# against the fleet: {} stored row{} with impossible values left out of the median\n", damaged,
               damaged == 1 ? "" : "s");
  return for_every_cycle(std::move(fleet), after);
}

}  // namespace

int run_compare(const CompareRequest& req) {
  const ResultSet after = read_result_set(req.runs.back());
  const ResultSet before = !req.fleet_db.empty() ? fleet_of(after, req.fleet_db)
                           : req.runs.size() > 1 ? read_result_set(req.runs.front())
                                                 : after;
  CompareResult r = compare_runs(before, after, req.options);
  fmt::print("{}", r.text);
  return r.failures ? static_cast<int>(ExitCode::threshold) : 0;
}

}  // namespace ccbench
