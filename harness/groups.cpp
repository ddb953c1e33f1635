#include "harness/groups.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/checks.h"
#include "core/error.h"
#include "results/stragglers.h"

namespace ccbench {

namespace {

constexpr const char* kGroupsHelp = "valid: world, node, pairs, rails, or a file of groups (one per line: [NAME:] RANK RANK ...)";

std::vector<RankGroup> by_key(const RankLayout& l, const std::vector<int>& key_of, const char* prefix) {
  std::map<int, RankGroup> groups;
  for (int r = 0; r < l.nranks; ++r) {
    RankGroup& g = groups[key_of[static_cast<size_t>(r)]];
    g.name = fmt::format("{}{}", prefix, key_of[static_cast<size_t>(r)]);
    g.ranks.push_back(r);
  }
  std::vector<RankGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  return out;
}

std::vector<RankGroup> pairs(int nranks) {
  std::vector<RankGroup> out;
  for (int a = 0; a < nranks; ++a)
    for (int b = a + 1; b < nranks; ++b) out.push_back({fmt::format("pair {}-{}", a, b), {a, b}});
  return out;
}

int rank_number(const std::string& word, const std::string& where, int nranks) {
  int r = -1;
  try {
    size_t used = 0;
    r = std::stoi(word, &used);
    if (used != word.size()) r = -1;
  } catch (const std::exception&) {
    r = -1;
  }
  if (r < 0 || r >= nranks)
    fail(ExitCode::usage, "--groups {}: '{}' is not a rank of this run (valid: 0 to {})", where, word, nranks - 1);
  return r;
}

// One group per line: "[NAME:] RANK RANK ..."; '#' starts a comment.
std::vector<RankGroup> from_file(const std::string& path, int nranks) {
  std::ifstream in(path);
  if (!in) fail(ExitCode::usage, "--groups {}: not world, node, pairs or rails, and no such file can be read ({})", path, kGroupsHelp);
  std::vector<RankGroup> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = line.substr(0, line.find('#'));
    const std::string where = fmt::format("{} line {}", path, n);
    RankGroup g;
    if (const size_t colon = line.find(':'); colon != std::string::npos) {
      std::istringstream name(line.substr(0, colon));
      name >> g.name;
      line = line.substr(colon + 1);
    }
    std::istringstream words(line);
    std::string w;
    while (words >> w) g.ranks.push_back(rank_number(w, where, nranks));
    if (g.ranks.empty() && g.name.empty()) continue;
    std::sort(g.ranks.begin(), g.ranks.end());
    if (std::adjacent_find(g.ranks.begin(), g.ranks.end()) != g.ranks.end())
      fail(ExitCode::usage, "--groups {}: a rank is listed twice in one group", where);
    if (g.ranks.size() < 2) fail(ExitCode::usage, "--groups {}: a group needs at least 2 ranks", where);
    if (g.name.empty()) g.name = fmt::format("group{}", out.size());
    out.push_back(std::move(g));
  }
  if (out.empty()) fail(ExitCode::usage, "--groups {}: the file names no group ({})", path, kGroupsHelp);
  return out;
}

}  // namespace

std::vector<RankGroup> make_groups(const std::string& spec, const RankLayout& l) {
  std::vector<RankGroup> groups;
  if (spec == "world") {
    RankGroup all{"world", {}};
    for (int r = 0; r < l.nranks; ++r) all.ranks.push_back(r);
    groups.push_back(std::move(all));
  } else if (spec == "node") {
    groups = by_key(l, l.node_of, "node");
  } else if (spec == "rails") {
    groups = by_key(l, l.local_rank_of, "rail");
  } else if (spec == "pairs") {
    groups = pairs(l.nranks);
  } else {
    groups = from_file(spec, l.nranks);
  }
  // From the run's layout, not the flag: a precondition of this launch (exit 3).
  if (groups.empty()) fail(ExitCode::precondition, "--groups {}: a run of {} rank has no pair of ranks", spec, l.nranks);
  for (const RankGroup& g : groups)
    if (g.ranks.size() < 2)
      fail(ExitCode::precondition, "--groups {}: group {} has 1 rank; a group needs at least 2 (start more ranks per {})",
           spec, g.name, spec == "rails" ? "local index" : "node");
  return groups;
}

std::vector<std::vector<size_t>> group_rounds(const std::vector<RankGroup>& groups, bool serial) {
  std::vector<std::vector<size_t>> rounds;
  if (serial) {
    for (size_t i = 0; i < groups.size(); ++i) rounds.push_back({i});
    return rounds;
  }
  std::map<int, size_t> owner;
  rounds.emplace_back();
  for (size_t i = 0; i < groups.size(); ++i) {
    for (int r : groups[i].ranks) {
      auto [it, fresh] = owner.try_emplace(r, i);
      if (!fresh)
        fail(ExitCode::usage, "--groups: groups {} and {} share rank {}; overlapping groups need --serial",
             groups[it->second].name, groups[i].name, r);
    }
    rounds.back().push_back(i);
  }
  return rounds;
}

namespace {

// The group of `rounds[round]` this rank belongs to (nullptr: none in this round).
const RankGroup* my_group(const std::vector<RankGroup>& groups, const std::vector<size_t>& round, int rank, int& index) {
  for (size_t i : round)
    if (std::binary_search(groups[i].ranks.begin(), groups[i].ranks.end(), rank)) {
      index = static_cast<int>(i);
      return &groups[i];
    }
  index = MPI_UNDEFINED;
  return nullptr;
}

// The rows of a sub-group run travel to rank 0 of the world as they are measured, on a
// communicator of their own: one message per row (its JSON), an empty one after a group's last.
constexpr int kRowTag = 0;

// At a group leader other than world rank 0: every row of its Runner is sent on to rank 0.
class ForwardingSink final : public ResultSink {
 public:
  explicit ForwardingSink(MPI_Comm rows) : comm_(rows) {}
  void begin(const Json&) override {}
  void add(const RunRecord& row) override { send(to_json(row).dump()); }
  void finish(const RunOutcome&) override {}
  // After the group's last row: the end message, then until rank 0 has received everything.
  void close() {
    send("");
    check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall of the rows sent to rank 0");
  }

 private:
  void send(std::string text) {
    texts_.push_back(std::move(text));  // a deque: the text stays put until its send completes
    requests_.emplace_back();
    check_mpi(MPI_Isend(texts_.back().data(), static_cast<int>(texts_.back().size()), MPI_CHAR, 0, kRowTag, comm_,
                        &requests_.back()),
              "MPI_Isend of a row to rank 0");
  }
  MPI_Comm comm_;
  std::deque<std::string> texts_;
  std::vector<MPI_Request> requests_;
};

// At world rank 0: its own group's rows and those the other leaders send, into `sink` and `rows`
// in the order they arrive; the others' are taken whenever a row of its own comes, and at the
// end of each round.
class RowCollector final : public ResultSink {
 public:
  RowCollector(MPI_Comm rows, ResultSink* sink, std::vector<RunRecord>& out) : comm_(rows), sink_(sink), out_(out) {}
  void begin(const Json&) override {}
  void add(const RunRecord& row) override {
    while (receive(false)) {
    }
    take(row);
  }
  void finish(const RunOutcome&) override {}
  // Takes rows until `leaders` groups (this round's other leaders) have sent their last.
  void wait_for(int leaders) {
    while (ended_ < leaders) receive(true);
    ended_ = 0;
  }

 private:
  bool receive(bool block) {
    int ready = 1;
    MPI_Status st;
    if (block) check_mpi(MPI_Probe(MPI_ANY_SOURCE, kRowTag, comm_, &st), "MPI_Probe for a group's rows");
    else check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, kRowTag, comm_, &ready, &st), "MPI_Iprobe for a group's rows");
    if (!ready) return false;
    int len = 0;
    MPI_Get_count(&st, MPI_CHAR, &len);
    std::string text(static_cast<size_t>(len), '\0');
    check_mpi(MPI_Recv(text.data(), len, MPI_CHAR, st.MPI_SOURCE, kRowTag, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv of a group's row");
    if (text.empty()) ++ended_;
    else take(record_from_json(Json::parse(text)));
    return true;
  }
  void take(const RunRecord& row) {
    if (sink_) sink_->add(row);
    out_.push_back(row);
  }
  MPI_Comm comm_;
  ResultSink* sink_;
  std::vector<RunRecord>& out_;
  int ended_ = 0;
};

// How many groups of `round` are led by a rank other than world rank 0.
int other_leaders(const std::vector<RankGroup>& groups, const std::vector<size_t>& round) {
  return static_cast<int>(std::count_if(round.begin(), round.end(), [&](size_t i) { return groups[i].ranks.front() != 0; }));
}

}  // namespace

GroupRunOutcome run_in_groups(const std::vector<RankGroup>& groups, const std::vector<std::vector<size_t>>& rounds,
                              const RunOptions& opts, const SweepPlan& plan, const ImplContext& world,
                              Backend& backend, ResultSink* sink, Watchdog& watchdog, std::atomic<Runner*>& active) {
  GroupRunOutcome out;
  const int rank = world.layout->rank;
  MPI_Comm rows_comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(world.comm, &rows_comm), "MPI_Comm_dup for the groups' rows");
  RowCollector collector(rows_comm, sink, out.rows);  // used on world rank 0 only
  for (const std::vector<size_t>& round : rounds) {
    int color = MPI_UNDEFINED;
    const RankGroup* group = my_group(groups, round, rank, color);
    MPI_Comm comm = MPI_COMM_NULL;
    watchdog.enter(fmt::format("--groups: splitting the communicator for {}", groups[round.front()].name));
    check_mpi(MPI_Comm_split(world.comm, color, rank, &comm), "MPI_Comm_split of a group");
    if (group) {
      const RankLayout layout = world.layout->subset(group->ranks);
      ImplContext ctx = world;
      ctx.comm = comm;
      ctx.layout = &layout;
      ForwardingSink forward(rows_comm);
      const bool leads = group->ranks.front() == rank;  // the group's rank 0: its rows come out there
      ResultSink* rows_to = rank == 0 ? static_cast<ResultSink*>(&collector) : leads ? &forward : nullptr;
      {
        Runner runner(opts, plan, ctx, backend, rows_to, watchdog);
        runner.set_group(group->name, group->ranks);
        active = &runner;
        out.code = more_severe(out.code, runner.run());
        active = nullptr;
        out.measured_any = out.measured_any || runner.measured_any();
        if (out.stop_reason.empty() && !runner.stop_reason().empty())
          out.stop_reason = fmt::format("group {}: {}", group->name, runner.stop_reason());
      }
      if (rank != 0 && leads) {
        watchdog.enter(fmt::format("--groups: handing the rows of {} to rank 0", group->name));
        forward.close();
      }
      MPI_Comm_free(&comm);
    }
    if (rank == 0) {
      watchdog.enter(fmt::format("--groups: taking the rows of this round's groups ({} first)", groups[round.front()].name));
      collector.wait_for(other_leaders(groups, round));
    }
    watchdog.enter(fmt::format("--groups: waiting for the groups of this round ({} first)", groups[round.front()].name));
    check_mpi(MPI_Barrier(world.comm), "MPI_Barrier between group rounds");
  }
  MPI_Comm_free(&rows_comm);
  int any = out.measured_any ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_LOR, world.comm), "MPI_Allreduce of measured rows");
  out.measured_any = any != 0;
  // The outlier column compares every group: known only now, so the files are revised with it.
  mark_group_outliers(out.rows);
  if (sink) sink->revise(out.rows);
  return out;
}

}  // namespace ccbench
