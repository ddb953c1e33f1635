// `ccbench accept`: acceptance rules over recorded runs.
#include "harness/verdict/acceptance.h"
#include "harness/app/app.h"
#include "results/links.h"
#include "results/metrics.h"

namespace ccbench {

int run_accept(const AcceptRequest& req) {
  std::vector<ResultSet> runs;
  for (const std::string& r : req.runs) runs.push_back(read_results_or_links(r));
  const ExitCode code = report_acceptance(req.rules, runs, req.junit, "results");
  if (!req.metrics.empty()) {
    const AcceptReport verdicts = evaluate_rules(req.rules, runs);
    write_metrics_file(req.metrics, metrics_text(runs, &verdicts));
  }
  return static_cast<int>(code);
}

}  // namespace ccbench
