// `ccbench run`: the stages of harness/run.h, in order.
#include "harness/app/app.h"
#include "harness/links/links.h"
#include "harness/run.h"

namespace ccbench {

int run_benchmark(const RunOptions& opts, int* argc, char*** argv) {
  return Run(opts, measure_link_ceilings).execute(argc, argv);
}

}  // namespace ccbench
