#pragma once
// Sub-group runs (--groups): the sweep runs in sub-communicators (MPI_Comm_split) instead of the
// whole world, one row per group and measurement. Groups:
//   world  every rank (the ordinary run)
//   node   the ranks of each node ("node0", "node1", ...; emulated nodes count)
//   pairs  every pair of ranks ("pair 0-3"): n(n-1)/2 groups in rounds of pairs on disjoint nodes
//          (topologies/pair_rounds.h: n-1 rounds for n nodes of one rank), or one at a time
//          with --serial; pairs sharing a node never run together, as they would measure their
//          contention instead
//   rails  the ranks with the same local index on every node ("rail0", ...)
//   bisect the culprit search (harness/groups/bisect_run.h): groups planned step by step, not here
//   FILE   one group per non-empty line: "[NAME:] RANK RANK ..." ('#' starts a comment)
// Disjoint groups run concurrently unless --serial; groups that share a rank need --serial.
// Every group sets its implementations up on its own communicator.
#include <string>
#include <vector>

#include <mpi.h>

#include "harness/engine/runner.h"
#include "topologies/layout.h"

namespace ccbench {

struct RankGroup {
  std::string name;
  std::vector<int> ranks;  // ranks of MPI_COMM_WORLD, ascending
};

// The groups of --groups SPEC over `layout`; throws Error(usage) naming what is wrong (an unknown
// kind, a missing or malformed file, a rank that does not exist, a group of fewer than 2 ranks).
std::vector<RankGroup> make_groups(const std::string& spec, const RankLayout& layout);

// The rounds groups run in: each round is a set of disjoint groups measured at the same time.
// `serial` (or `pairs`) gives one group per round; otherwise overlapping groups are an
// Error(usage) naming the shared rank.
std::vector<std::vector<size_t>> group_rounds(const std::vector<RankGroup>& groups, bool serial);

// The rounds of --groups pairs (`pairs` as make_groups("pairs") makes them): pair_rounds() over
// the layout's nodes, pairs on disjoint nodes together, or one pair per round with `serial`.
std::vector<std::vector<size_t>> pair_group_rounds(const std::vector<RankGroup>& pairs, const RankLayout& layout,
                                                   bool serial);

// What a sub-group run did: every rank's exit code, and on rank 0 every group's rows with
// group_outlier_ratio filled (results/stragglers.h).
struct GroupRunOutcome {
  ExitCode code = ExitCode::ok;
  std::vector<RunRecord> rows;  // rank 0 only
  bool measured_any = false;
  std::string stop_reason;
};

// Runs the sweep in every group, round after round, with one Runner per group over its own
// communicator (attached to `guard` while it runs). Every group's rank 0 sends each row to world
// rank 0 as it is measured (on a duplicate of `world`'s communicator); rank 0 hands them to `sink`
// whenever a row of its own group comes and at the end of each round, so a later failure keeps
// them. At the end the sink is revised with every row's group_outlier_ratio, which needs all
// groups. A rank done with its part of a round waits for the others from the last news of their
// progress (beats from each group's rank 0, passed on by world rank 0), not from the round's
// start; a group's rank 0 that times out hands its row to world rank 0, which ends the run with
// it (ResultSink::add_last, JobGuard::end_job). Collective over `world`.
GroupRunOutcome run_in_groups(const std::vector<RankGroup>& groups, const std::vector<std::vector<size_t>>& rounds,
                              const RunOptions& opts, const SweepPlan& plan, const ImplContext& world, Backend& backend,
                              ResultSink* sink, JobGuard& guard);
// run_in_groups() without the comparison of every group at the end (no revise): one part of a
// run whose groups are planned as it goes (harness/groups/bisect_run.h). Collective over `world`.
GroupRunOutcome run_group_rounds(const std::vector<RankGroup>& groups, const std::vector<std::vector<size_t>>& rounds,
                                 const RunOptions& opts, const SweepPlan& plan, const ImplContext& world,
                                 Backend& backend, ResultSink* sink, JobGuard& guard);

}  // namespace ccbench
