// results/: the writers (table, CSV, JSON, Markdown), checked against golden files in
// tests/golden/ (tests/unit/golden.h; scripts/update-golden.sh updates them).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "golden.h"

#include "results/csv_reader.h"
#include "core/error.h"
#include "results/sink.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

RunRecord sink_row(const std::string& impl, const std::string& transport, std::uint64_t bytes, bool in_place) {
  return RecordBuilder()
      .impl(impl)
      .transport(transport)
      .float_bytes(bytes)
      .in_place(in_place)
      .ranks(4, 2, 2)
      .iterations(20, 5);
}

RunRecord timed(RunRecord r, double avg, double median, double busbw, double busbw_median) {
  r.time_avg_us = avg;
  r.time_median_us = median;
  r.time_min_us = median * 0.9;
  r.time_p95_us = avg * 1.25;
  r.time_max_us = avg * 1.5;
  r.time_cv = 0.0525;
  r.algbw_gbps = busbw / 1.5;  // all-reduce bus factor 2(n-1)/n with n = 4
  r.busbw_gbps = busbw;
  r.busbw_median_gbps = busbw_median;
  r.wrong = 0;
  return r;
}

// A small run: NCCL at 16 KiB (a GPU case, with the algorithm NCCL chose) eager and as CUDA-graph
// replays (the in-place replays not checkable for sum), MPI's own all-reduce (8 B skipped, 16 KiB
// measured), our tree under -c 0 (not checked), then our ring (8 B, 16 KiB with a wrong in-place
// result, 16 MiB timing out, which ends the run).
std::vector<RunRecord> golden_rows() {
  std::vector<RunRecord> rows;
  for (bool ip : {false, true}) {
    RunRecord r = timed(sink_row("nccl", "nccl", 16384, ip), 11.5, 11.25, 2.137, 2.184);
    r.device = "gpu";
    r.algorithm = ip ? "RING/LL 2ch" : "RING/LL128 2ch";
    rows.push_back(r);
  }
  for (bool ip : {false, true}) {
    RunRecord r = timed(sink_row("nccl", "nccl", 16384, ip), 9.5, 9.25, 2.587, 2.657);
    r.device = "gpu";
    r.mode = "graph";
    r.algorithm = "RING/LL 2ch";
    if (ip) {
      r.wrong.reset();
      r.reason = "not checked: replaying in-place iterations of this op changes the data; see the eager row";
    }
    rows.push_back(r);
  }
  for (bool ip : {false, true}) {
    RunRecord r = sink_row("mpi", "mpi", 8, ip);
    r.status = RowStatus::skipped;
    r.reason = "needs \"MPI_IN_PLACE\" on 1-element buffers, which this MPI rejects";
    rows.push_back(r);
  }
  rows.push_back(timed(sink_row("mpi", "mpi", 16384, false), 31.25, 30.5, 0.7864, 0.8058));
  rows.push_back(timed(sink_row("mpi", "mpi", 16384, true), 32.5, 31.75, 0.7562, 0.7741));
  for (bool ip : {false, true}) {
    RunRecord r = timed(sink_row("tree", "shm", 16384, ip), 27.5, 26.75, 0.8937, 0.9187);
    r.wrong.reset();
    r.reason = "not checked (-c 0)";
    rows.push_back(r);
  }
  rows.push_back(timed(sink_row("ring", "shm", 8, false), 12.87, 12.5, 0.00093, 0.00096));
  rows.push_back(timed(sink_row("ring", "shm", 8, true), 14.16, 14, 0.00085, 0.00086));
  rows.push_back(timed(sink_row("ring", "shm", 16384, false), 25.3, 24.9, 0.9714, 0.987));
  RunRecord wrong = timed(sink_row("ring", "shm", 16384, true), 26.1, 25.75, 0.9416, 0.9544);
  wrong.status = RowStatus::wrong;
  wrong.wrong = 3;
  wrong.reason = "rank 1 (node-b) index 17: expected 6, got 7";
  rows.push_back(wrong);
  RunRecord failed = sink_row("ring", "shm", 16777216, false);
  failed.status = RowStatus::failed;
  failed.reason = "timeout after 30 s\nwaiting for rank 2 (node-b)";
  rows.push_back(failed);
  return rows;
}

Json golden_context() {
  Json c = Json::object();
  c["schema_version"] = kSchemaVersion;
  c["ccbench_version"] = "0.3.0";
  c["git_hash"] = "0123456789ab";
  c["hosts"] = Json::array({"node-a", "node-b"});
  c["env"] = Json::object({{"OMPI_MCA_btl", "^openib"}, {"NCCL_DEBUG", "WARN"}});
  c["timing"] = "steady clock; an iteration's time is the slowest rank's";
  c["command_line"] = Json::array({"mpirun", "-np", "4", "ccbench", "run", "-b", "8", "-e", "16M", "-f", "1024",
                                    "--output", "ccbench-results/rack 7"});
  return c;
}

RunOutcome golden_outcome() {
  RunOutcome o;
  o.complete = false;
  o.reason = "timeout at 16 MiB (allreduce/ring)";
  o.exit_code = 5;
  o.verdict = "FAILED: 3 wrong elements, 1 timeout";
  return o;
}

class SinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ccbench_test_sinks_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

void run_all(ResultSink& s) {
  s.begin(golden_context());
  for (const RunRecord& r : golden_rows()) s.add(r);
  s.finish(golden_outcome());
}

// ---------------------------------------------------------------------------------------------
// Table
// ---------------------------------------------------------------------------------------------

TEST(TableSink, Golden) {
  std::ostringstream out;
  auto s = make_table_sink(out);
  run_all(*s);
  golden::expect_matches("table.txt", out.str());
}

TEST(TableSink, PairsOutOfPlaceWithItsInPlaceTwin) {
  std::ostringstream out;
  auto s = make_table_sink(out);
  s->begin(Json::object());
  s->add(timed(sink_row("ring", "shm", 1024, false), 10, 10, 1, 1));
  // Held until its twin arrives: the case header is out, the row is not.
  EXPECT_NE(out.str().find("# allreduce  impl ring"), std::string::npos);
  EXPECT_EQ(out.str().find("        1024"), std::string::npos);
  s->add(timed(sink_row("ring", "shm", 1024, true), 20, 20, 2, 2));
  const std::string paired = out.str();
  EXPECT_NE(paired.find("        1024           256     float     sum      -1      10.00      10.00"),
            std::string::npos)
      << paired;
  EXPECT_NE(paired.find("1.00       0      20.00      20.00     1.33     2.00       0\n"), std::string::npos) << paired;
}

TEST(TableSink, UnpairedRowsShowTheMissingSideAsDashes) {
  std::ostringstream out;
  auto s = make_table_sink(out);
  s->begin(Json::object());
  s->add(timed(sink_row("ring", "shm", 1024, false), 10, 10, 1, 1));
  s->add(timed(sink_row("ring", "shm", 2048, false), 10, 10, 1, 1));  // not the twin: 1024 goes out alone
  s->add(timed(sink_row("ring", "shm", 4096, true), 10, 10, 1, 1));   // no out-of-place row before it
  RunOutcome ok;
  ok.verdict = "OK";
  s->finish(ok);
  const std::string t = out.str();
  const std::string dashes = "          -          -        -        -       -";
  EXPECT_NE(t.find("0.67     1.00       0" + dashes + "\n"), std::string::npos) << t;  // 1024 and 2048
  EXPECT_NE(t.find("        4096          1024     float     sum      -1" + dashes), std::string::npos) << t;
  EXPECT_NE(t.find("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1\n# Result: OK\n"), std::string::npos)
      << t;
  EXPECT_EQ(t.find("Incomplete"), std::string::npos);
}

TEST(TableSink, OneSideFailedIsNamedBelowTheRow) {
  std::ostringstream out;
  auto s = make_table_sink(out);
  s->begin(Json::object());
  s->add(timed(sink_row("ring", "shm", 64, false), 5, 5, 0.01, 0.01));
  RunRecord f = sink_row("ring", "shm", 64, true);
  f.status = RowStatus::failed;
  f.reason = "guard region after the buffer damaged";
  s->add(f);
  s->finish(RunOutcome{});
  EXPECT_NE(out.str().find("\n#   in-place failed: guard region after the buffer damaged\n"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("# Avg bus bandwidth    : 0.01\n"), std::string::npos) << out.str();
}

TEST(TableSink, NothingMeasured) {
  std::ostringstream out;
  auto s = make_table_sink(out);
  s->begin(Json::object());
  RunOutcome o;
  o.complete = false;
  o.reason = "no implementation can run here";
  o.exit_code = 3;
  s->finish(o);
  EXPECT_EQ(out.str(),
            "# Out of bounds values : N/A\n# Avg bus bandwidth    : -\n"
            "# Result: FAILED (exit code 3: precondition not met)\n# Incomplete: no implementation can run here\n");
}

// Rows under -c 0: "not checked" is its own state, never a number the footer sums.
std::vector<RunRecord> unchecked_rows() {
  std::vector<RunRecord> rows;
  for (std::uint64_t bytes : {1024, 2048})
    for (bool ip : {false, true}) {
      RunRecord r = timed(sink_row("ring", "shm", bytes, ip), 10, 10, 1, 1);
      r.wrong.reset();
      r.reason = "not checked (-c 0)";
      rows.push_back(r);
    }
  return rows;
}

std::string table_of(const std::vector<RunRecord>& rows, const RunOutcome& outcome) {
  std::ostringstream out;
  auto s = make_table_sink(out);
  s->begin(Json::object());
  for (const RunRecord& r : rows) s->add(r);
  s->finish(outcome);
  return out.str();
}

TEST(TableSink, UncheckedRowsShowNAAndTheFooterAgrees) {
  const std::string t = table_of(unchecked_rows(), RunOutcome{});
  EXPECT_NE(t.find("0.67     1.00     N/A      10.00      10.00     0.67     1.00     N/A\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\n# Out of bounds values : N/A (4 rows not checked)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\n# Result: OK\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("FAILED"), std::string::npos) << t;
  EXPECT_EQ(t.find("-4"), std::string::npos) << t;
}

TEST(TableSink, FooterSumsCheckedRowsOnly) {
  std::vector<RunRecord> rows = unchecked_rows();
  RunRecord bad = timed(sink_row("ring", "shm", 4096, false), 10, 10, 1, 1);
  bad.wrong = 3;
  bad.status = RowStatus::wrong;
  bad.reason = "rank 0: element 1 expected 2 got 3";
  rows.push_back(bad);
  rows.push_back(timed(sink_row("ring", "shm", 4096, true), 10, 10, 1, 1));
  const std::string t = table_of(rows, RunOutcome{false, "", 1, ""});
  EXPECT_NE(t.find("\n# Out of bounds values : 3 FAILED (4 rows not checked)\n"), std::string::npos) << t;
}

TEST(TableSink, InPlaceGraphReplaysOfASumAreNotSummed) {
  // The rows of a passing GPU run with -G: eager rows checked, in-place graph rows not checkable.
  std::vector<RunRecord> rows;
  for (const char* mode : {"eager", "graph"})
    for (bool ip : {false, true}) {
      RunRecord r = timed(sink_row("ring", "cuda_ipc", 65536, ip), 10, 10, 1, 1);
      r.mode = mode;
      if (r.mode == "graph" && ip) {
        r.wrong.reset();
        r.reason = "not checked: replaying in-place iterations of this op changes the data; see the eager row";
      }
      rows.push_back(r);
    }
  const std::string t = table_of(rows, RunOutcome{});
  EXPECT_NE(t.find("\n# Out of bounds values : 0 OK (1 row not checked)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\n# Result: OK\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("FAILED"), std::string::npos) << t;
}

TEST(TableSink, AverageBusBandwidthPerCaseNeverMixed) {
  std::vector<RunRecord> rows;
  rows.push_back(timed(sink_row("ring", "shm", 1024, false), 10, 10, 1, 1));
  rows.push_back(timed(sink_row("ring", "shm", 2048, false), 10, 10, 3, 3));
  rows.push_back(timed(sink_row("tree", "shm", 1024, false), 10, 10, 10, 10));
  RunRecord ag = timed(sink_row("ring", "shm", 1024, false), 10, 10, 7, 7);
  ag.collective = "allgather";
  rows.push_back(ag);
  const std::string t = table_of(rows, RunOutcome{});
  EXPECT_NE(t.find("\n# Avg bus bandwidth    : per case\n"
                   "#   allreduce/ring over shm, cpu, float sum, eager, 4 ranks (2 per node) : 2\n"
                   "#   allreduce/tree over shm, cpu, float sum, eager, 4 ranks (2 per node) : 10\n"
                   "#   allgather/ring over shm, cpu, float sum, eager, 4 ranks (2 per node) : 7\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("# Avg bus bandwidth    : 5"), std::string::npos) << t;  // the mixed mean of old
}

TEST(FooterSink, PrintsTheTablesFooterAlone) {
  std::vector<RunRecord> rows = unchecked_rows();
  rows.push_back(timed(sink_row("tree", "shm", 1024, false), 10, 10, 4, 4));
  RunOutcome o{false, "stopped", 1, "FAILED: wrong results"};
  std::ostringstream out;
  auto s = make_footer_sink(out);
  s->begin(Json::object());
  for (const RunRecord& r : rows) s->add(r);
  s->finish(o);
  const std::string table = table_of(rows, o);
  EXPECT_TRUE(out.str().starts_with("# Out of bounds values : 0 OK (4 rows not checked)\n")) << out.str();
  EXPECT_TRUE(table.ends_with(out.str())) << table << "\n---\n" << out.str();
  EXPECT_NE(out.str().find("# Result: FAILED: wrong results\n# Incomplete: stopped\n"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------

TEST_F(SinkTest, CsvGoldenAndReadBack) {
  const std::string p = path("results.csv");
  auto s = make_csv_sink(p);
  run_all(*s);
  s.reset();
  golden::expect_matches("results.csv", golden::read(p));
  const std::vector<RunRecord> back = read_results_csv(p);
  const std::vector<RunRecord> rows = golden_rows();
  ASSERT_EQ(back.size(), rows.size());
  // The CSV keeps 6 significant digits: reading it back gives the same fields again.
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(to_csv_fields(back[i]), to_csv_fields(rows[i])) << "row " << i;
}

TEST_F(SinkTest, CsvRowIsOnDiskWhenAddReturns) {
  const std::string p = path("results.csv");
  auto s = make_csv_sink(p);
  s->begin(golden_context());
  EXPECT_TRUE(parse_csv(golden::read(p)).rows.empty());
  s->add(golden_rows()[0]);
  EXPECT_EQ(parse_csv(golden::read(p)).rows.size(), 1u);
  const std::string before_finish = golden::read(p);
  s->finish(golden_outcome());
  EXPECT_EQ(golden::read(p), before_finish);  // no footer: the file stays a plain table
}

TEST_F(SinkTest, CsvCommandLineComment) {
  const std::string p = path("results.csv");
  auto s = make_csv_sink(p);
  s->begin(Json::object({{"command_line", Json::array({"ccbench", "--tag", "it's", ""})}}));
  EXPECT_TRUE(golden::read(p).starts_with(
      "# ccbench results, schema_version 4\n# command: ccbench --tag 'it'\\''s' ''\ncollective,impl,"))
      << golden::read(p);
  auto t = make_csv_sink(path("other.csv"));
  t->begin(Json::object({{"command_line", "ccbench run\n-b 8"}}));
  EXPECT_TRUE(golden::read(path("other.csv"))
                  .starts_with("# ccbench results, schema_version 4\n# command: ccbench run -b 8\ncollective"));
}

// ---------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------

TEST_F(SinkTest, JsonSaysRunningUntilFinish) {
  const std::string p = path("run.json");
  auto s = make_json_sink(p);
  Json j = Json::parse(golden::read(p));  // written at once, so a run that dies early still leaves it
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["incomplete_reason"], kRunningReason);

  s->begin(golden_context());
  s->add(golden_rows()[2]);
  j = Json::parse(golden::read(p));
  EXPECT_EQ(j["schema_version"], kSchemaVersion);
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["incomplete_reason"], kRunningReason);
  EXPECT_TRUE(j["exit_code"].is_null());
  EXPECT_EQ(j["context"], golden_context());
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(to_json(record_from_json(j["rows"][0])), to_json(golden_rows()[2]));

  RunOutcome ok;
  ok.verdict = "OK";
  s->finish(ok);
  j = Json::parse(golden::read(p));
  EXPECT_EQ(j["complete"], true);
  EXPECT_TRUE(j["incomplete_reason"].is_null());
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["verdict"], "OK");
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"schema_version", "complete", "incomplete_reason", "exit_code", "verdict",
                                            "context", "rows"}));
  EXPECT_FALSE(std::filesystem::exists(p + ".tmp"));
}

TEST_F(SinkTest, JsonIncompleteRun) {
  const std::string p = path("run.json");
  auto s = make_json_sink(p);
  run_all(*s);
  const Json j = Json::parse(golden::read(p));
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["incomplete_reason"], "timeout at 16 MiB (allreduce/ring)");
  EXPECT_EQ(j["exit_code"], 5);
  EXPECT_EQ(j["rows"].size(), golden_rows().size());
  EXPECT_EQ(j["rows"].back()["reason"], "timeout after 30 s\nwaiting for rank 2 (node-b)");
  EXPECT_EQ(j["rows"][1]["algorithm"], "RING/LL 2ch");
  EXPECT_TRUE(j["rows"][3]["wrong"].is_null());  // in-place graph replays of a sum: not checked
  EXPECT_EQ(j["rows"][2]["wrong"], 0);
}

TEST_F(SinkTest, ReviseRewritesTheFilesWithTheRowsAsRevised) {
  // A sub-group run: rows streamed as measured, then revised with group_outlier_ratio.
  const std::string csv = path("results.csv"), json = path("run.json"), md = path("results.md");
  FanoutSink s;
  s.add_sink(make_csv_sink(csv));
  s.add_sink(make_json_sink(json));
  s.add_sink(make_markdown_sink(md));
  s.begin(golden_context());
  std::vector<RunRecord> rows = {golden_rows()[0], golden_rows()[2]};
  for (const RunRecord& r : rows) s.add(r);
  rows[0].group_outlier_ratio = 1.5;
  rows[1].group_outlier_ratio = 0.75;
  s.revise(rows);
  s.finish(golden_outcome());
  const std::vector<RunRecord> back = read_results_csv(csv);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].group_outlier_ratio, 1.5);
  EXPECT_EQ(back[1].group_outlier_ratio, 0.75);
  EXPECT_TRUE(golden::read(csv).starts_with("# ccbench results, schema_version 4\n")) << golden::read(csv);
  const Json j = Json::parse(golden::read(json));
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["group_outlier_ratio"], 1.5);
  EXPECT_EQ(j["complete"], golden_outcome().complete);
  const std::string text = golden::read(md);
  EXPECT_EQ(text, [&] {  // the same file as one written from the revised rows
    const std::string again = path("again.md");
    auto m = make_markdown_sink(again);
    m->begin(golden_context());
    for (const RunRecord& r : rows) m->add(r);
    m->finish(golden_outcome());
    return golden::read(again);
  }());
}

// ---------------------------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------------------------

TEST_F(SinkTest, MarkdownGolden) {
  const std::string p = path("results.md");
  auto s = make_markdown_sink(p);
  s->begin(golden_context());
  EXPECT_NE(golden::read(p).find("**running**"), std::string::npos);
  const std::vector<RunRecord> rows = golden_rows();
  s->add(rows.front());
  // Rewritten as rows arrive (the first ones always; later ones paced, see WritePacer).
  EXPECT_NE(golden::read(p).find("RING/LL128 2ch"), std::string::npos);
  for (size_t i = 1; i < rows.size(); ++i) s->add(rows[i]);
  s->finish(golden_outcome());
  golden::expect_matches("results.md", golden::read(p));
}

// A row judged against a link ceiling and the model, another without a prediction, a skipped one.
std::vector<RunRecord> judged_rows() {
  RunRecord a = timed(sink_row("ring", "shm", 1 << 20, false), 100, 100, 8, 8);
  a.link_ceiling_gbps = 10;
  a.efficiency = 0.8;
  a.predicted_time_us = 90;
  a.predicted_busbw_gbps = 10;
  a.model_efficiency = 0.8;
  a.model_link_gbps = 10;
  a.model_link = "measured ceiling";
  RunRecord b = timed(sink_row("mpi", "mpi", 1 << 20, false), 100, 100, 6, 6);
  b.model_reason = "the model has no algorithm for impl mpi";
  RunRecord c = sink_row("ring", "shm", 4, false);
  c.status = RowStatus::skipped;
  c.model_reason = "not measured";
  return {a, b, c};
}

Json judged_context() {
  Json c = golden_context();
  c["link_ceilings"] = {{"source", "links.json"}, {"ceilings", Json::array()}};
  c["model"] = {{"topology", "cpu-node"}, {"file", "presets/cpu-node.yaml"}};
  return c;
}

// Every writer of rows writes what a row is judged against: results.csv (read back the same),
// run.json (as the -J copy, which is the same writer), results.md.
TEST_F(SinkTest, CeilingAndModelColumnsInEveryFileWriter) {
  auto csv = make_csv_sink(path("results.csv"));
  auto json = make_json_sink(path("run.json"));
  auto md = make_markdown_sink(path("results.md"));
  for (ResultSink* s : {csv.get(), json.get(), md.get()}) {
    s->begin(judged_context());
    for (const RunRecord& r : judged_rows()) s->add(r);
    s->finish(RunOutcome{});
  }
  const std::vector<RunRecord> back = read_results_csv(path("results.csv"));
  ASSERT_EQ(back.size(), 3u);
  const std::vector<RunRecord> wanted = judged_rows();
  for (size_t i = 0; i < back.size(); ++i) {
    const RunRecord& want = wanted[i];
    EXPECT_EQ(back[i].link_ceiling_gbps, want.link_ceiling_gbps) << i;
    EXPECT_EQ(back[i].efficiency, want.efficiency) << i;
    EXPECT_EQ(back[i].predicted_time_us, want.predicted_time_us) << i;
    EXPECT_EQ(back[i].predicted_busbw_gbps, want.predicted_busbw_gbps) << i;
    EXPECT_EQ(back[i].model_efficiency, want.model_efficiency) << i;
    EXPECT_EQ(back[i].model_link_gbps, want.model_link_gbps) << i;
    EXPECT_EQ(back[i].model_link, want.model_link) << i;
    EXPECT_EQ(back[i].model_reason, want.model_reason) << i;
  }
  const CsvTable t = read_csv_file(path("results.csv"));
  for (const char* h : {"link_ceiling[GB/s]", "efficiency", "predicted_time[us]", "predicted_busbw[GB/s]",
                        "model_efficiency", "model_link[GB/s]", "model_link", "model_reason"})
    EXPECT_NE(std::find(t.header.begin(), t.header.end(), h), t.header.end()) << h;
  std::ifstream csv_text(path("results.csv"));
  const std::string text((std::istreambuf_iterator<char>(csv_text)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("# link ceilings: links.json\n# model: cpu-node (presets/cpu-node.yaml)\n"), std::string::npos)
      << text;

  std::ifstream in(path("run.json"));
  const Json doc = Json::parse(in);
  const Json& r0 = doc["rows"][0];
  EXPECT_EQ(r0["link_ceiling_gbps"], 10);
  EXPECT_EQ(r0["efficiency"], 0.8);
  EXPECT_EQ(r0["predicted_busbw_gbps"], 10);
  EXPECT_EQ(r0["model_link"], "measured ceiling");
  EXPECT_TRUE(doc["rows"][1]["predicted_busbw_gbps"].is_null());
  EXPECT_EQ(doc["rows"][1]["model_reason"], "the model has no algorithm for impl mpi");
  EXPECT_EQ(doc["context"]["model"]["topology"], "cpu-node");
  EXPECT_EQ(doc["context"]["link_ceilings"]["source"], "links.json");

  std::ifstream md_in(path("results.md"));
  const std::string m((std::istreambuf_iterator<char>(md_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(m.find("| #wrong | ceiling (GB/s) | efficiency | predicted busbw (GB/s) | measured / predicted | status |"),
            std::string::npos) << m;
  EXPECT_NE(m.find("| 0 | 10.00 | 0.80 | 10.00 | 0.80 | ok |"), std::string::npos) << m;
  EXPECT_NE(m.find("| - | - | - | - | - | - | - | - | - | - | - | - | skipped |"), std::string::npos) << m;
  EXPECT_NE(m.find("| #wrong | status |\n"), std::string::npos) << m;  // the mpi case: neither, so no such columns
}

TEST_F(SinkTest, MarkdownEscapesTableCells) {
  const std::string p = path("results.md");
  auto s = make_markdown_sink(p);
  s->begin(Json::object());
  RunRecord r = sink_row("ring", "shm", 8, false);
  r.status = RowStatus::skipped;
  r.reason = "a|b\nc";
  s->add(r);
  EXPECT_NE(golden::read(p).find("| skipped: a\\|b c |\n"), std::string::npos) << golden::read(p);
}

// ---------------------------------------------------------------------------------------------
// Failures and the fan-out
// ---------------------------------------------------------------------------------------------

void expect_usage_error_naming(const std::function<void()>& f, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST_F(SinkTest, UnwritablePathsFailAtConstruction) {
  const std::string missing_dir = path("no/such/dir/out");
  expect_usage_error_naming([&] { make_csv_sink(missing_dir + ".csv"); }, missing_dir + ".csv");
  expect_usage_error_naming([&] { make_json_sink(missing_dir + ".json"); }, missing_dir + ".json");
  expect_usage_error_naming([&] { make_markdown_sink(missing_dir + ".md"); }, missing_dir + ".md");
  expect_usage_error_naming([&] { write_file_atomically(missing_dir, "x"); }, "cannot write " + missing_dir);
  // A directory where the file should be.
  std::filesystem::create_directories(path("taken"));
  expect_usage_error_naming([&] { make_csv_sink(path("taken")); }, path("taken"));
  std::filesystem::create_directories(path("taken.json"));
  expect_usage_error_naming([&] { make_json_sink(path("taken.json")); }, path("taken.json"));
}

TEST_F(SinkTest, WriteFileAtomicallyReplacesTheFile) {
  const std::string p = path("f.txt");
  std::filesystem::create_directories(p + ".tmp/inside");  // the name every process once shared
  write_file_atomically(p, "first");
  write_file_atomically(p, "second");
  EXPECT_EQ(golden::read(p), "second");
  EXPECT_FALSE(std::filesystem::exists(p + ".tmp." + std::to_string(getpid())));
  EXPECT_TRUE(std::filesystem::exists(p + ".tmp/inside"));
}

TEST(WriteErrorCode, AFailedStorageIsAnIoErrorAPathThatCannotBeWrittenAUsageError) {
  for (int err : {ENOSPC, EDQUOT, EIO, EFBIG}) EXPECT_EQ(write_error_code(err), ExitCode::runtime) << err;
  for (int err : {EACCES, EPERM, EROFS, EISDIR, ENOTDIR, ENOENT}) EXPECT_EQ(write_error_code(err), ExitCode::usage) << err;
}

TEST_F(SinkTest, AFullDiskIsAnIoErrorNamingTheFile) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  auto csv = make_csv_sink("/dev/full");  // opens; every write fails with ENOSPC
  try {
    csv->begin(Json::object());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::runtime);
    EXPECT_NE(std::string(e.what()).find("cannot write /dev/full: No space left on device"), std::string::npos)
        << e.what();
  }
}

struct Recording : ResultSink {
  std::vector<std::string>* log;
  bool throws;
  Recording(std::vector<std::string>* l, bool t) : log(l), throws(t) {}
  void begin(const Json&) override { note("begin"); }
  void add(const RunRecord& r) override { note("add " + r.impl); }
  void finish(const RunOutcome&) override { note("finish"); }
  void note(const std::string& what) {
    log->push_back(what);
    if (throws) throw Error(ExitCode::usage, "cannot write somewhere");
  }
};

TEST(FanoutSink, EverySinkGetsEveryCallEvenWhenOneThrows) {
  std::vector<std::string> a, b;
  FanoutSink f;
  f.add_sink(std::make_unique<Recording>(&a, true));
  f.add_sink(std::make_unique<Recording>(&b, false));
  EXPECT_THROW(f.begin(Json::object()), Error);
  EXPECT_THROW(f.add(sink_row("ring", "shm", 8, false)), Error);
  EXPECT_THROW(f.finish(RunOutcome{}), Error);
  const std::vector<std::string> expected{"begin", "add ring", "finish"};
  EXPECT_EQ(a, expected);
  EXPECT_EQ(b, expected);
}

}  // namespace
}  // namespace ccbench
