// The progress line: measurements counted from the rows as the runner emits them, whole-case
// rows counting what the case would have measured, and the lines written on a non-terminal.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>

#include "harness/progress.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

// Keeps what reaches the sink behind the progress decorator.
class ProgressRecorder final : public ResultSink {
 public:
  explicit ProgressRecorder(int* rows) : rows_(rows) {}
  void begin(const Json&) override {}
  void add(const RunRecord&) override { ++*rows_; }
  void finish(const RunOutcome&) override {}

 private:
  int* rows_;
};

ProgressPlan small_plan() {
  ProgressPlan p;
  p.collectives = {Collective::allreduce, Collective::broadcast};
  p.impls = {"ring", "tree"};
  p.sizes = 3;
  return p;
}

RunRecord progress_row(const char* coll, const char* impl, std::uint64_t bytes, bool in_place) {
  return RecordBuilder().collective(coll).impl(impl).bytes(bytes).in_place(in_place);
}

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  return s;
}

TEST(Progress, PlanCountsEveryMeasurement) {
  ProgressPlan p = small_plan();
  EXPECT_EQ(p.variants(Collective::allreduce), 2u);
  EXPECT_EQ(p.per_pair(Collective::allreduce), 6u);  // 3 sizes x out-of-place and in-place
  EXPECT_EQ(p.per_cycle(), 24u);
  p.in_place = InPlaceChoice::no;
  EXPECT_EQ(p.per_cycle(), 12u);
}

TEST(Progress, RowsAdvanceTheCount) {
  int rows = 0;
  std::FILE* out = std::tmpfile();
  ProgressSettings s;
  s.out = out;
  s.interval = std::chrono::duration<double>(0);  // a line for every row
  ProgressSink sink(std::make_unique<ProgressRecorder>(&rows), small_plan(), s);
  sink.begin(Json::object());
  sink.add(progress_row("allreduce", "mpi", 0, false));  // an implementation skipped up front: not planned
  EXPECT_EQ(sink.done(), 0u);
  sink.add(progress_row("allreduce", "ring", 8, false));
  sink.add(progress_row("allreduce", "ring", 8, true));
  EXPECT_EQ(sink.done(), 2u);
  RunRecord graph = progress_row("allreduce", "ring", 8, true);
  graph.mode = "graph";
  sink.add(graph);  // beside its eager twin: no measurement of its own
  EXPECT_EQ(sink.done(), 2u);
  sink.add(progress_row("allreduce", "tree", 0, false));  // a whole case skipped: ring counts as done, tree's 6 too
  EXPECT_EQ(sink.done(), 12u);
  sink.add(progress_row("broadcast", "ring", 8, false));
  EXPECT_EQ(sink.done(), 13u);
  EXPECT_NE(sink.line().find("13/24 measurements (54%)"), std::string::npos) << sink.line();
  sink.finish({true, "", 0, "OK"});
  EXPECT_EQ(rows, 6);  // every row reached the inner sink
  const std::string text = read_all(out);
  EXPECT_NE(text.find("ccbench: progress: 2/24 measurements (8%)"), std::string::npos) << text;
  EXPECT_NE(text.find("left\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ccbench: progress: 13 measurements in"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << "no carriage returns outside a terminal";
  std::fclose(out);
}

TEST(Progress, CyclesRepeatThePairs) {
  ProgressPlan p;
  p.collectives = {Collective::allgather};
  p.impls = {"ring"};
  p.sizes = 1;
  p.in_place = InPlaceChoice::no;
  p.cycles = 3;
  int rows = 0;
  ProgressSink sink(std::make_unique<ProgressRecorder>(&rows), p, ProgressSettings{false, std::chrono::hours(1), stderr});
  for (int c = 0; c < 3; ++c) sink.add(progress_row("allgather", "ring", 64, false));
  EXPECT_EQ(sink.done(), 3u);
  EXPECT_NE(sink.line().find("3/3 measurements (100%)"), std::string::npos) << sink.line();
}

TEST(Progress, TerminalLineIsRedrawnInPlace) {
  int rows = 0;
  std::FILE* out = std::tmpfile();
  ProgressSink sink(std::make_unique<ProgressRecorder>(&rows), small_plan(), ProgressSettings{true, std::chrono::seconds(5), out});
  sink.add(progress_row("allreduce", "ring", 8, false));
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  sink.add(progress_row("allreduce", "ring", 8, true));
  sink.finish({true, "", 0, "OK"});
  const std::string text = read_all(out);
  EXPECT_NE(text.find("\rccbench: 2/24 measurements"), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << "a terminal line is never scrolled";
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K");  // cleared at the end
  std::fclose(out);
}

TEST(Progress, Durations) {
  EXPECT_EQ(format_duration(std::chrono::seconds(42)), "42 s");
  EXPECT_EQ(format_duration(std::chrono::seconds(185)), "3 min 05 s");
  EXPECT_EQ(format_duration(std::chrono::seconds(7620)), "2 h 07 min");
}

}  // namespace
}  // namespace ccbench
