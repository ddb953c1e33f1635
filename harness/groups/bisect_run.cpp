#include "harness/groups/bisect_run.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/checks.h"
#include "core/error.h"
#include "results/bisection.h"

namespace ccbench {

using Json = nlohmann::ordered_json;

namespace {

// A node by the name people know it by: its host where every node is a host of its own, else
// "node N (HOST)" (emulated nodes share one).
std::string node_name(const RankLayout& l, int node) {
  for (int r = 0; r < l.nranks; ++r)
    if (l.node_of[static_cast<size_t>(r)] == node)
      return l.hosts == l.nodes ? l.host_of[static_cast<size_t>(r)]
                                : fmt::format("node {} ({})", node, l.host_of[static_cast<size_t>(r)]);
  return fmt::format("node {}", node);
}

// The step's groups as integers for MPI_Bcast: [groups, size, nodes..., size, nodes...]; [0] ends.
std::vector<int> encode(const BisectionStep* step) {
  std::vector<int> v{step ? static_cast<int>(step->groups.size()) : 0};
  if (step)
    for (const BisectionGroup& g : step->groups) {
      v.push_back(static_cast<int>(g.nodes.size()));
      v.insert(v.end(), g.nodes.begin(), g.nodes.end());
    }
  return v;
}

// Rank 0's step, on every rank: the groups' nodes (empty: the search is over).
std::vector<std::vector<int>> broadcast_step(MPI_Comm comm, const BisectionStep* step) {
  std::vector<int> v = encode(step);
  int n = static_cast<int>(v.size());
  check_mpi(MPI_Bcast(&n, 1, MPI_INT, 0, comm), "MPI_Bcast of a culprit search step");
  v.resize(static_cast<size_t>(n));
  check_mpi(MPI_Bcast(v.data(), n, MPI_INT, 0, comm), "MPI_Bcast of a culprit search step");
  std::vector<std::vector<int>> groups(static_cast<size_t>(v[0]));
  size_t at = 1;
  for (auto& g : groups) {
    const int size = v[at++];
    g.assign(v.begin() + static_cast<long>(at), v.begin() + static_cast<long>(at) + size);
    at += static_cast<size_t>(size);
  }
  return groups;
}

std::string compact(const std::vector<int>& nodes) {
  std::string s;
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + (j > i ? fmt::format("{}-{}", nodes[i], nodes[j]) : std::to_string(nodes[i]));
    i = j + 1;
  }
  return s;
}

RankGroup group_of(const RankLayout& l, int step, const std::vector<int>& nodes) {
  RankGroup g{fmt::format("step{} nodes {}", step, compact(nodes)), {}};
  for (int r = 0; r < l.nranks; ++r)
    if (std::binary_search(nodes.begin(), nodes.end(), l.node_of[static_cast<size_t>(r)])) g.ranks.push_back(r);
  return g;
}

// A group's figure: the busbw of its first measured row at its largest size, out of place where
// it has one.
std::optional<double> figure_of(const std::vector<RunRecord>& rows, const std::string& group) {
  std::uint64_t largest = 0;
  for (const RunRecord& r : rows)
    if (r.group == group && r.status == RowStatus::ok) largest = std::max(largest, r.bytes);
  const RunRecord* pick = nullptr;
  for (const RunRecord& r : rows)
    if (r.group == group && r.status == RowStatus::ok && r.bytes == largest &&
        (!pick || (pick->in_place && !r.in_place)))
      pick = &r;
  if (!pick) return std::nullopt;
  return pick->busbw_gbps;
}

std::string step_line(const BisectionStep& step, size_t index, const BisectionSearch::NodeName& name) {
  std::string s = fmt::format("# culprit search step {}:", index);
  for (const BisectionGroup& g : step.groups) {
    std::string names;
    for (int n : g.nodes) names += (names.empty() ? "" : ", ") + name(n);
    s += fmt::format(" [{}] {} {}{}", names, g.figure ? fmt::format("{:.3g} GB/s", *g.figure) : "-", g.verdict,
                     &g == &step.groups.back() ? "" : ";");
  }
  return s + "\n";
}

Json search_json(const BisectionSearch& search, const BisectionSearch::NodeName& name, int nodes) {
  Json steps = Json::array();
  for (const BisectionStep& step : search.steps()) {
    Json groups = Json::array();
    for (const BisectionGroup& g : step.groups) {
      Json members = Json::array();
      for (int n : g.nodes) members.push_back(name(n));
      groups.push_back(
          {{"nodes", members}, {"busbw_GBps", g.figure ? Json(*g.figure) : Json(nullptr)}, {"verdict", g.verdict}});
    }
    steps.push_back({{"groups", groups}});
  }
  Json culprits = Json::array(), suspects = Json::array();
  for (int n : search.culprits()) culprits.push_back(name(n));
  for (int n : search.suspects()) suspects.push_back(name(n));
  return {{"nodes", nodes},       {"steps", steps},       {"step_bound", bisection_step_bound(nodes)},
          {"culprits", culprits}, {"suspects", suspects}, {"conclusion", search.conclusion()}};
}

}  // namespace

BisectOutcome run_bisection(const RunOptions& opts, const SweepPlan& plan, const ImplContext& world, Backend& backend,
                            ResultSink* sink, JobGuard& guard) {
  const RankLayout& l = *world.layout;
  const BisectionSearch::NodeName name = [&l](int n) { return node_name(l, n); };
  BisectionSearch search(l.nodes, opts.group_outlier_threshold, name);  // decided on rank 0
  BisectOutcome out;
  for (int step = 0;; ++step) {
    const std::vector<std::vector<int>> nodes =
        broadcast_step(world.comm, l.rank == 0 && !search.done() ? &search.next() : nullptr);
    if (nodes.empty()) break;
    std::vector<RankGroup> groups;
    std::vector<size_t> round;
    for (const std::vector<int>& g : nodes) {
      round.push_back(groups.size());
      groups.push_back(group_of(l, step, g));
    }
    // The halves at once, or one after the other with --serial (where they would share cores or links).
    const std::vector<std::vector<size_t>> rounds =
        opts.serial ? group_rounds(groups, true) : std::vector<std::vector<size_t>>{round};
    GroupRunOutcome part = run_group_rounds(groups, rounds, opts, plan, world, backend, sink, guard);
    out.run.code = more_severe(out.run.code, part.code);
    out.run.measured_any = out.run.measured_any || part.measured_any;
    if (out.run.stop_reason.empty()) out.run.stop_reason = part.stop_reason;
    out.run.rows.insert(out.run.rows.end(), part.rows.begin(), part.rows.end());
    if (l.rank != 0) continue;
    std::vector<std::optional<double>> figures;
    for (const RankGroup& g : groups) figures.push_back(figure_of(part.rows, g.name));
    search.record(figures);
    out.report += step_line(search.steps()[static_cast<size_t>(step)], static_cast<size_t>(step), name);
  }
  if (l.rank == 0) {
    out.report += fmt::format("# culprit search over {} nodes: {} ({} steps; at most {} for one slow node)\n", l.nodes,
                              search.conclusion(), search.steps().size(), bisection_step_bound(l.nodes));
    out.json = search_json(search, name, l.nodes);
  }
  return out;
}

}  // namespace ccbench
