#pragma once
// The wall time of accepting a fleet (`ccbench model --acceptance`): the performance model
// (harness/model/model.h) costs each measurement of the acceptance sequence on a described
// system of N nodes:
//   whole job      one collective over every node, the sweep's sizes;
//   all pairs      every pair of nodes, the collective over the two: in rounds of N/2 pairs on
//                  disjoint nodes measured at once (topologies/pair_rounds.h: N-1 rounds, N for an
//                  odd N), against N(N-1)/2 pairs one at a time (--serial, an oversubscribed fabric);
//   culprit search after the whole job (its first step), halves of the suspects
//                  (results/bisection.h): at most ceil(log2 N) halvings and one confirmation,
//                  the two groups of a step at once.
// A measurement of one size is warm-up + 2 x iterations calls (the batch, then the single timed
// calls the median comes from: harness/engine/runner.cpp), out of place; every step adds `step_setup_s`
// (communicators split, implementations connected, the group's rows gathered). The data checks
// and the fabric's contention between the pairs of a round are not costed.
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/impl_id.h"
#include "collectives/types.h"
#include "topologies/system.h"

namespace ccbench {

// The set-up of one step of a group run (communicators split, implementations connected, rows
// gathered): a placeholder of the order of a CPU-rank step, not yet measured. GPU steps add
// NCCL's communicator set-up, which grows with the nodes: give --step-setup for the system at hand.
inline constexpr double kDefaultStepSetupSeconds = 0.05;

struct AcceptanceRequest {
  Collective collective = Collective::allreduce;
  std::string algorithm = name(ModelSchedule::ring);
  std::vector<std::uint64_t> sizes;
  int warmup = 5, iterations = 20;
  double step_setup_s = kDefaultStepSetupSeconds;
};

struct AcceptancePhase {
  std::string name;
  long long steps = 0;
  long long groups_per_step = 0;  // measured at the same time
  double seconds = 0;             // the phase's wall time, set-up included
  std::string note;
};

struct AcceptanceEstimate {
  std::vector<AcceptancePhase> phases;  // whole job, pairs in rounds, pairs one at a time, culprit search
  double sequence_seconds = 0;          // whole job + pairs in rounds + culprit search (after the whole job)
  double serial_sequence_seconds = 0;   // the same with pairs one at a time
};

// Throws Error(usage) for an unknown algorithm, or a system of fewer than 2 nodes.
AcceptanceEstimate estimate_acceptance(const SystemTopology& system, const AcceptanceRequest& req);

// The measuring time of one step: the collective over `nodes` nodes of `system` at every size.
double measured_seconds(const SystemTopology& system, int nodes, const AcceptanceRequest& req);

// "1.2 s", "3.4 min", "5.6 h", "7.8 d".
std::string human_duration(double seconds);

}  // namespace ccbench
