// `ccbench accept`: acceptance rules over recorded runs.
#include "harness/acceptance.h"
#include "harness/app/app.h"
#include "results/links.h"

namespace ccbench {

int run_accept(const AcceptRequest& req) {
  std::vector<ResultSet> runs;
  for (const std::string& r : req.runs) runs.push_back(read_results_or_links(r));
  return static_cast<int>(report_acceptance(req.rules, runs, req.junit, "results"));
}

}  // namespace ccbench
