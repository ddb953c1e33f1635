#include "harness/groups/groups.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/checks.h"
#include "core/error.h"
#include "results/stragglers.h"
#include "topologies/pair_rounds.h"

namespace ccbench {

namespace {

constexpr const char* kGroupsHelp =
    "valid: world, node, pairs, rails, bisect, or a file of groups (one per line: [NAME:] RANK RANK ...)";

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
  if (!in)
    fail(ExitCode::usage, "--groups {}: not world, node, pairs, rails or bisect, and no such file can be read ({})",
         path, kGroupsHelp);
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
  if (groups.empty())
    fail(ExitCode::precondition, "--groups {}: a run of {} rank has no pair of ranks", spec, l.nranks);
  for (const RankGroup& g : groups)
    if (g.ranks.size() < 2)
      fail(ExitCode::precondition,
           "--groups {}: group {} has 1 rank; a group needs at least 2 (start more ranks per {})", spec, g.name,
           spec == "rails" ? "local index" : "node");
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

std::vector<std::vector<size_t>> pair_group_rounds(const std::vector<RankGroup>& pairs, const RankLayout& layout,
                                                   bool serial) {
  std::map<RankPair, size_t> index;
  for (size_t i = 0; i < pairs.size(); ++i) index[{pairs[i].ranks.front(), pairs[i].ranks.back()}] = i;
  std::vector<std::vector<size_t>> rounds;
  for (const PairRound& round : pair_rounds(layout.node_of, serial)) {
    rounds.emplace_back();
    for (const RankPair& p : round) rounds.back().push_back(index.at(p));
  }
  return rounds;
}

namespace {

// The group of `rounds[round]` this rank belongs to (nullptr: none in this round).
const RankGroup* my_group(const std::vector<RankGroup>& groups, const std::vector<size_t>& round, int rank,
                          int& index) {
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
// News that a group still makes progress, empty: from a group's leader to rank 0 when it enters a
// phase, and from rank 0 on to every other rank; and rank 0's word that a round has ended.
constexpr int kBeatTag = 1;
constexpr int kRoundEndTag = 2;
// A leader's row that ends the run (its timeout): rank 0 ends the run with it, at once.
constexpr int kLastRowTag = 3;

// A rank that has finished its part of a round waits for the other groups, which keep their own
// deadlines (each phase, --timeout T); the waiting rank's deadline counts from the last news of
// progress. News travels at most every quarter of T: a beat reaches rank 0 within one interval of
// the phase it reports, rank 0's relay reaches a waiting rank within one more. So rank 0 waits
// T + 2 intervals and the others T + 4, and a stuck group's own ranks, which see the stuck call
// itself, speak first (the rank that waits longest decides least).
struct ProgressPace {
  explicit ProgressPace(std::chrono::milliseconds timeout)
      : interval(std::max(timeout / 4, std::chrono::milliseconds(10))), rank0_wait(timeout + 2 * interval),
        others_wait(timeout + 4 * interval) {}
  std::chrono::milliseconds interval, rank0_wait, others_wait;
};

// True at most once per interval.
class Pacer {
 public:
  explicit Pacer(std::chrono::milliseconds interval) : interval_(interval) {}
  bool due() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < interval_) return false;
    last_ = now;
    return true;
  }

 private:
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
};

// Sends that complete later: each text stays put (a deque) until MPI_Waitall.
class Sends {
 public:
  void send(std::string text, int to, int tag, MPI_Comm comm) {
    texts_.push_back(std::move(text));
    requests_.emplace_back();
    check_mpi(MPI_Isend(texts_.back().data(), static_cast<int>(texts_.back().size()), MPI_CHAR, to, tag, comm,
                        &requests_.back()),
              "MPI_Isend of a group's row or news");
  }
  void wait_all() {
    check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall of a group's rows and news");
    texts_.clear();
    requests_.clear();
  }
  // As wait_all, for at most `limit` (the receiver may be gone); true when all completed.
  bool wait_all_for(std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    int done = 0;
    while (MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE) ==
               MPI_SUCCESS &&
           !done && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return done != 0;
  }

 private:
  std::deque<std::string> texts_;
  std::vector<MPI_Request> requests_;
};

// At a group leader other than world rank 0: every row of its Runner is sent on to rank 0, and
// a beat when it enters a phase (at most one per interval).
class ForwardingSink final : public ResultSink {
 public:
  ForwardingSink(MPI_Comm rows, const ProgressPace& pace) : comm_(rows), beats_(pace.interval) {}
  void begin(const Json&) override {}
  void add(const RunRecord& row) override { sends_.send(to_json(row).dump(), 0, kRowTag, comm_); }
  // The row of this group's timeout: rank 0 ends the run with it (this rank waits for that).
  void add_last(const RunRecord& row) override {
    sends_.send(to_json(row).dump(), 0, kLastRowTag, comm_);
    (void)sends_.wait_all_for(kCloseResultsWait);
  }
  void finish(const RunOutcome&) override {}
  void beat() {
    if (beats_.due()) sends_.send("", 0, kBeatTag, comm_);
  }
  // After the group's last row: the end message, then until rank 0 has received everything.
  void close() {
    sends_.send("", 0, kRowTag, comm_);
    sends_.wait_all();
  }

 private:
  MPI_Comm comm_;
  Pacer beats_;
  Sends sends_;
};

// At world rank 0: its own group's rows and those the other leaders send, into `sink` and `rows`
// in the order they arrive; the others' are taken whenever a row of its own comes, when it
// enters a phase (at most once per interval), and at the end of each round. News of progress
// (a row, a beat, a phase of its own) goes on to every other rank, at most once per interval.
class RowCollector final : public ResultSink {
 public:
  RowCollector(MPI_Comm rows, const ProgressPace& pace, ResultSink* sink, std::vector<RunRecord>& out, JobGuard& guard)
      : comm_(rows), polls_(pace.interval), relays_(pace.interval), sink_(sink), out_(out), guard_(guard) {
    MPI_Comm_size(rows, &nranks_);
  }
  void begin(const Json&) override {}
  void add(const RunRecord& row) override {
    while (receive(false)) {}
    take(row);
  }
  void finish(const RunOutcome&) override {}
  // Rank 0 entered a phase of its own group's run.
  void poll() {
    if (!polls_.due()) return;
    while (receive(false)) {}
    news_ = true;
    relay();
  }
  // Takes rows until `leaders` groups (this round's other leaders) have sent their last;
  // `on_news` after each message. Then tells every other rank that the round has ended.
  template <typename OnNews>
  void wait_for(int leaders, OnNews on_news) {
    while (ended_ < leaders) {
      receive(true);
      on_news();
      relay();
    }
    ended_ = 0;
    for (int r = 1; r < nranks_; ++r) relays_sent_.send("", r, kRoundEndTag, comm_);
    relays_sent_.wait_all();
  }

 private:
  bool receive(bool block) {
    int ready = 1;
    MPI_Status st;
    if (block) check_mpi(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &st), "MPI_Probe for a group's rows");
    else check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &ready, &st), "MPI_Iprobe for a group's rows");
    if (!ready) return false;
    int len = 0;
    MPI_Get_count(&st, MPI_CHAR, &len);
    std::string text(static_cast<size_t>(len), '\0');
    check_mpi(MPI_Recv(text.data(), len, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv of a group's row");
    news_ = true;
    if (st.MPI_TAG == kBeatTag) return true;
    if (text.empty()) ++ended_;
    else take(record_from_json(Json::parse(text)));
    if (st.MPI_TAG == kLastRowTag) end_run_for(out_.back(), st.MPI_SOURCE);
    return true;
  }
  // A group's leader timed out and waits for rank 0 to end the run, which closes the result files
  // with its reason.
  [[noreturn]] void end_run_for(const RunRecord& row, int leader) {
    const std::string reason = fmt::format("timeout in group {}: {}", row.group, row.reason);
    guard_.end_job({.exit_code = static_cast<int>(ExitCode::timeout),
                    .reason = reason,
                    .verdict = "FAILED: timeout",
                    .message = fmt::format("rank 0: {} (reported by world rank {}, the group's first); ending the run "
                                           "with exit code 5",
                                           reason, leader),
                    .abort_mpi = true});
  }
  void take(const RunRecord& row) {
    if (sink_) sink_->add(row);
    out_.push_back(row);
  }
  void relay() {
    if (!news_ || !relays_.due()) return;
    news_ = false;
    for (int r = 1; r < nranks_; ++r) relays_sent_.send("", r, kBeatTag, comm_);
  }
  MPI_Comm comm_;
  int nranks_ = 1;
  Pacer polls_, relays_;
  Sends relays_sent_;
  bool news_ = false;
  ResultSink* sink_;
  std::vector<RunRecord>& out_;
  JobGuard& guard_;
  int ended_ = 0;
};

// A rank other than 0 at the end of a round: waits for rank 0's word that every group has ended,
// its deadline restarting with each news of progress that rank 0 passes on.
void wait_for_round_end(MPI_Comm rows, Watchdog& watchdog, const std::string& phase,
                        std::chrono::milliseconds allowance) {
  for (;;) {
    watchdog.enter(phase, allowance);
    MPI_Status st;
    check_mpi(MPI_Probe(0, MPI_ANY_TAG, rows, &st), "MPI_Probe for rank 0's news of the groups");
    check_mpi(MPI_Recv(nullptr, 0, MPI_CHAR, 0, st.MPI_TAG, rows, MPI_STATUS_IGNORE),
              "MPI_Recv of rank 0's news of the groups");
    if (st.MPI_TAG == kRoundEndTag) return;
  }
}

// How many groups of `round` are led by a rank other than world rank 0.
int other_leaders(const std::vector<RankGroup>& groups, const std::vector<size_t>& round) {
  return static_cast<int>(
      std::count_if(round.begin(), round.end(), [&](size_t i) { return groups[i].ranks.front() != 0; }));
}

}  // namespace

namespace {

double seconds(std::chrono::milliseconds t) { return static_cast<double>(t.count()) / 1000.0; }

// Sets the watchdog's observer for a scope.
struct OnEnter {
  OnEnter(Watchdog& w, std::function<void()> f) : watchdog(w) { watchdog.set_on_enter(std::move(f)); }
  ~OnEnter() { watchdog.set_on_enter({}); }
  Watchdog& watchdog;
};

// One sub-group run: the rounds, this rank's group in each, and the news between them.
class GroupRun {
 public:
  GroupRun(const RunOptions& opts, const SweepPlan& plan, const ImplContext& world, Backend& backend, ResultSink* sink,
           JobGuard& guard)
      : opts_(opts), plan_(plan), world_(world), backend_(backend), guard_(guard), watchdog_(guard.watchdog()),
        rank_(world.layout->rank), pace_(opts.timeout), rows_comm_(dup(world.comm)),
        collector_(rows_comm_, pace_, sink, out_.rows, guard) {}
  ~GroupRun() { MPI_Comm_free(&rows_comm_); }
  GroupRun(const GroupRun&) = delete;
  GroupRun& operator=(const GroupRun&) = delete;

  GroupRunOutcome run(const std::vector<RankGroup>& groups, const std::vector<std::vector<size_t>>& rounds) {
    for (const std::vector<size_t>& round : rounds) {
      const std::string first = groups[round.front()].name;
      int color = MPI_UNDEFINED;
      const RankGroup* group = my_group(groups, round, rank_, color);
      MPI_Comm comm = MPI_COMM_NULL;
      watchdog_.enter(fmt::format("--groups: splitting the communicator for {}", first));
      check_mpi(MPI_Comm_split(world_.comm, color, rank_, &comm), "MPI_Comm_split of a group");
      if (group) {
        run_group(*group, comm);
        MPI_Comm_free(&comm);
      }
      end_round(first, other_leaders(groups, round));
    }
    return std::move(out_);
  }

 private:
  static MPI_Comm dup(MPI_Comm c) {
    MPI_Comm d = MPI_COMM_NULL;
    check_mpi(MPI_Comm_dup(c, &d), "MPI_Comm_dup for the groups' rows");
    return d;
  }

  // This rank's group: its sweep, the rows to rank 0 as they are measured, beats from its leader.
  void run_group(const RankGroup& group, MPI_Comm comm) {
    const RankLayout layout = world_.layout->subset(group.ranks);
    ImplContext ctx = world_;
    ctx.comm = comm;
    ctx.layout = &layout;
    ForwardingSink forward(rows_comm_, pace_);
    const bool leads = group.ranks.front() == rank_;  // the group's rank 0: its rows come out there
    ResultSink* rows_to = rank_ == 0 ? static_cast<ResultSink*>(&collector_) : leads ? &forward : nullptr;
    {
      OnEnter news(watchdog_, rank_ == 0 ? std::function<void()>([this] { collector_.poll(); })
                              : leads    ? std::function<void()>([&forward] { forward.beat(); })
                                         : std::function<void()>());
      Runner runner(opts_, plan_, ctx, backend_, rows_to, guard_, {}, RunnerGroup{group.name, group.ranks});
      out_.code = more_severe(out_.code, runner.run());
      out_.measured_any = out_.measured_any || runner.measured_any();
      if (out_.stop_reason.empty() && !runner.stop_reason().empty())
        out_.stop_reason = fmt::format("group {}: {}", group.name, runner.stop_reason());
    }
    if (rank_ != 0 && leads) {
      watchdog_.enter(fmt::format("--groups: handing the rows of {} to rank 0", group.name));
      forward.close();
    }
  }

  // Rank 0 takes the rows of the round's `leaders` other groups and then tells every rank that
  // the round has ended; the others wait for that word. Both wait from the last news of progress.
  void end_round(const std::string& first, int leaders) {
    if (rank_ == 0) {
      const std::string phase = fmt::format(
          "--groups: taking the rows of this round's groups ({} first; {:.1f} s from the last news of progress)", first,
          seconds(pace_.rank0_wait));
      watchdog_.enter(phase, pace_.rank0_wait);
      collector_.wait_for(leaders, [&] { watchdog_.enter(phase, pace_.rank0_wait); });
    } else {
      wait_for_round_end(rows_comm_, watchdog_,
                         fmt::format("--groups: waiting for the groups of this round ({} first; {:.1f} s from the last "
                                     "news of progress)",
                                     first, seconds(pace_.others_wait)),
                         pace_.others_wait);
    }
  }

  const RunOptions& opts_;
  const SweepPlan& plan_;
  const ImplContext& world_;
  Backend& backend_;
  JobGuard& guard_;
  Watchdog& watchdog_;
  const int rank_;
  const ProgressPace pace_;
  GroupRunOutcome out_;
  MPI_Comm rows_comm_;
  RowCollector collector_;  // used on world rank 0 only
};

}  // namespace

GroupRunOutcome run_group_rounds(const std::vector<RankGroup>& groups, const std::vector<std::vector<size_t>>& rounds,
                                 const RunOptions& opts, const SweepPlan& plan, const ImplContext& world,
                                 Backend& backend, ResultSink* sink, JobGuard& guard) {
  GroupRunOutcome out = GroupRun(opts, plan, world, backend, sink, guard).run(groups, rounds);
  int any = out.measured_any ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_LOR, world.comm), "MPI_Allreduce of measured rows");
  out.measured_any = any != 0;
  return out;
}

GroupRunOutcome run_in_groups(const std::vector<RankGroup>& groups, const std::vector<std::vector<size_t>>& rounds,
                              const RunOptions& opts, const SweepPlan& plan, const ImplContext& world, Backend& backend,
                              ResultSink* sink, JobGuard& guard) {
  GroupRunOutcome out = run_group_rounds(groups, rounds, opts, plan, world, backend, sink, guard);
  // The outlier and culprit columns compare every group: known only now, so the files are
  // revised with them.
  mark_group_outliers(out.rows);
  mark_pair_culprits(out.rows, opts.group_outlier_threshold);
  if (sink) sink->revise(out.rows);
  return out;
}

}  // namespace ccbench
