#pragma once
// `ccbench model`: predictions of the performance model (harness/model/model.h) for a described
// system, and `ccbench topo --dump`: the local node written as a topology file.
#include <string>
#include <vector>

#include "collectives/types.h"
#include "harness/model/acceptance_plan.h"
#include "harness/engine/sizes.h"

namespace ccbench {

struct ModelRequest {
  std::string topology;  // a topology file, or a preset name from topologies/presets
  std::vector<Collective> collectives{Collective::allreduce};
  std::vector<std::string> algorithms;  // empty: all the model knows
  SweepSpec sweep{8, 1ull << 30, 2.0, 0};
  int nodes = 0;                 // > 0: replaces the file's node count
  std::string format = "table";  // table, csv or json
  // --acceptance: the wall time of accepting the fleet (harness/model/acceptance_plan.h) with the
  // first collective and algorithm, -n timed and -w warm-up iterations per size.
  bool acceptance = false;
  int iterations = 20, warmup = 5;
  double step_setup_s = kDefaultStepSetupSeconds;
};

// Prints the predictions on stdout; returns the exit code.
int run_model(const ModelRequest& req);
// Writes the local node (ccbench topo's discovery) as a topology file to `path` ("-": stdout).
int dump_local_topology(const std::string& path);

}  // namespace ccbench
