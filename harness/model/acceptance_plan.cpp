#include "harness/model/acceptance_plan.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "harness/model/model.h"
#include "results/bisection.h"
#include "topologies/pair_rounds.h"

namespace ccbench {

double measured_seconds(const SystemTopology& system, int nodes, const AcceptanceRequest& req) {
  SystemTopology t = system;
  t.nodes = nodes;
  const CollectiveModel model(t, req.collective, req.algorithm);
  double us = 0;
  for (std::uint64_t bytes : req.sizes) {
    const Prediction p = model.predict(bytes);
    if (!p.unsupported.empty())
      fail(ExitCode::usage, "--acceptance: {} cannot run {}: {}", req.algorithm, name(req.collective), p.unsupported);
    us += (req.warmup + 2.0 * req.iterations) * p.time_us;
  }
  return us / 1e6;
}

AcceptanceEstimate estimate_acceptance(const SystemTopology& system, const AcceptanceRequest& req) {
  const int n = system.nodes;
  if (n < 2) fail(ExitCode::usage, "--acceptance: {} node: pairs and the culprit search need 2 or more (--nodes)", n);
  AcceptanceEstimate e;
  const double whole = measured_seconds(system, n, req) + req.step_setup_s;
  const double pair = measured_seconds(system, 2, req) + req.step_setup_s;
  const long long rounds = pair_round_count(n, false), serial = pair_round_count(n, true);
  e.phases.push_back({"whole job", 1, 1, whole, fmt::format("{} nodes", n)});
  e.phases.push_back({"all pairs, in rounds", rounds, n / 2, static_cast<double>(rounds) * pair,
                      fmt::format("{} pairs, {} at a time on disjoint nodes", serial, n / 2)});
  e.phases.push_back({"all pairs, one at a time", serial, 1, static_cast<double>(serial) * pair, "--serial"});
  // The culprit search after the whole job (its first step): the larger half of the suspects
  // each step (its two halves at once), then one step of a node with a healthy one.
  const int halvings = bisection_step_bound(n) - 2;
  double search = pair;
  for (int k = 1, group = n; k <= halvings; ++k) {
    group = (group + 1) / 2;
    search += measured_seconds(system, std::max(group, 2), req) + req.step_setup_s;
  }
  e.phases.push_back({"culprit search", halvings + 1, 2, search,
                      fmt::format("at most, after the whole job: {} halvings and one confirmation", halvings)});
  e.sequence_seconds = whole + e.phases[1].seconds + search;
  e.serial_sequence_seconds = whole + e.phases[2].seconds + search;
  return e;
}

std::string human_duration(double s) {
  if (s < 60) return fmt::format("{:.3g} s", s);
  if (s < 3600) return fmt::format("{:.3g} min", s / 60);
  if (s < 86400) return fmt::format("{:.3g} h", s / 3600);
  return fmt::format("{:.3g} d", s / 86400);
}

}  // namespace ccbench
