#pragma once
// --groups bisect: the culprit search of results/bisection.h measured with MPI. Step by step,
// rank 0 plans the groups of nodes to measure (the whole job first, then halves of the
// suspects, a single suspect with a healthy node), tells every rank, and the groups run the
// sweep at the same time (harness/groups/groups.h run_group_rounds()); a group's figure is the busbw of
// its first measured row at the largest size (the run's first case, out of place where measured):
// run the search with one collective, one implementation and one large size (-b 64M -e 64M).
// Rows of every step go into the results like any group's ("step2 nodes 2-3"); rank 0 prints each
// step and the conclusion, and run.json's context gets "culprit_search".
#include <string>

#include <nlohmann/json.hpp>

#include "harness/groups/groups.h"

namespace ccbench {

struct BisectOutcome {
  GroupRunOutcome run;
  std::string report;           // rank 0: the lines printed after the table
  nlohmann::ordered_json json;  // rank 0: the search for run.json ("culprit_search")
};

// Collective over `world`; Error(precondition) when the run has fewer than 2 nodes.
BisectOutcome run_bisection(const RunOptions& opts, const SweepPlan& plan, const ImplContext& world, Backend& backend,
                            ResultSink* sink, JobGuard& guard);

}  // namespace ccbench
