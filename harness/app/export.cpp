// `ccbench export`: recorded runs as Prometheus metrics (results/metrics.h), on stdout or into a
// .prom file that node_exporter's textfile collector serves.
#include <fmt/format.h>

#include "harness/app/app.h"
#include "results/links.h"
#include "results/metrics.h"

namespace ccbench {

int run_export(const ExportRequest& req) {
  std::vector<ResultSet> runs;
  for (const std::string& r : req.runs) runs.push_back(read_results_or_links(r));
  const std::string text = metrics_text(runs, nullptr);
  if (req.metrics.empty()) {
    fmt::print("{}", text);
  } else {
    write_metrics_file(req.metrics, text);
    fmt::print(stderr, "# metrics: {}\n", req.metrics);
  }
  return 0;
}

}  // namespace ccbench
