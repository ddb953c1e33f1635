// results/: the writers (table, CSV, JSON, Markdown), checked against golden files in
// tests/golden/. CCBENCH_UPDATE_GOLDEN=1 rewrites the golden files from the current output.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "results/csv_reader.h"
#include "results/error.h"
#include "results/sink.h"

namespace ccbench {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(CCBENCH_GOLDEN_DIR) + "/" + name;
  const char* update = std::getenv("CCBENCH_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    std::cerr << "rewrote " << path << "\n";
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing; CCBENCH_UPDATE_GOLDEN=1 writes it";
  EXPECT_EQ(actual, read_file(path)) << "output differs from " << path
                                     << " (CCBENCH_UPDATE_GOLDEN=1 rewrites it after a deliberate change)";
}

RunRecord row(const std::string& impl, const std::string& transport, std::uint64_t bytes, bool in_place) {
  RunRecord r;
  r.collective = "allreduce";
  r.impl = impl;
  r.transport = transport;
  r.device = "cpu";
  r.dtype = "float";
  r.op = "sum";
  r.bytes = bytes;
  r.count = bytes / 4;
  r.in_place = in_place;
  r.ranks = 4;
  r.ranks_per_node = 2;
  r.nodes = 2;
  r.warmup = 5;
  r.iterations = 20;
  return r;
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
  return r;
}

// A small run: NCCL at 16 KiB (a GPU case, with the algorithm NCCL chose), MPI's own
// all-reduce (8 B skipped, 16 KiB measured), then our ring (8 B, 16 KiB
// with a wrong in-place result, 16 MiB timing out, which ends the run).
std::vector<RunRecord> golden_rows() {
  std::vector<RunRecord> rows;
  for (bool ip : {false, true}) {
    RunRecord r = timed(row("nccl", "nccl", 16384, ip), 11.5, 11.25, 2.137, 2.184);
    r.device = "gpu";
    r.algorithm = ip ? "RING/LL 2ch" : "RING/LL128 2ch";
    rows.push_back(r);
  }
  for (bool ip : {false, true}) {
    RunRecord r = row("mpi", "mpi", 8, ip);
    r.status = RowStatus::skipped;
    r.reason = "needs \"MPI_IN_PLACE\" on 1-element buffers, which this MPI rejects";
    rows.push_back(r);
  }
  rows.push_back(timed(row("mpi", "mpi", 16384, false), 31.25, 30.5, 0.7864, 0.8058));
  rows.push_back(timed(row("mpi", "mpi", 16384, true), 32.5, 31.75, 0.7562, 0.7741));
  rows.push_back(timed(row("ring", "shm", 8, false), 12.87, 12.5, 0.00093, 0.00096));
  rows.push_back(timed(row("ring", "shm", 8, true), 14.16, 14, 0.00085, 0.00086));
  rows.push_back(timed(row("ring", "shm", 16384, false), 25.3, 24.9, 0.9714, 0.987));
  RunRecord wrong = timed(row("ring", "shm", 16384, true), 26.1, 25.75, 0.9416, 0.9544);
  wrong.status = RowStatus::wrong;
  wrong.wrong = 3;
  wrong.reason = "rank 1 (node-b) index 17: expected 6, got 7";
  rows.push_back(wrong);
  RunRecord failed = row("ring", "shm", 16777216, false);
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
  expect_golden("table.txt", out.str());
}

TEST(TableSink, PairsOutOfPlaceWithItsInPlaceTwin) {
  std::ostringstream out;
  auto s = make_table_sink(out);
  s->begin(Json::object());
  s->add(timed(row("ring", "shm", 1024, false), 10, 10, 1, 1));
  // Held until its twin arrives: the case header is out, the row is not.
  EXPECT_NE(out.str().find("# allreduce  impl ring"), std::string::npos);
  EXPECT_EQ(out.str().find("        1024"), std::string::npos);
  s->add(timed(row("ring", "shm", 1024, true), 20, 20, 2, 2));
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
  s->add(timed(row("ring", "shm", 1024, false), 10, 10, 1, 1));
  s->add(timed(row("ring", "shm", 2048, false), 10, 10, 1, 1));  // not the twin: 1024 goes out alone
  s->add(timed(row("ring", "shm", 4096, true), 10, 10, 1, 1));   // no out-of-place row before it
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
  s->add(timed(row("ring", "shm", 64, false), 5, 5, 0.01, 0.01));
  RunRecord f = row("ring", "shm", 64, true);
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
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : -\n"
            "# Result: FAILED (exit code 3: precondition not met)\n# Incomplete: no implementation can run here\n");
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------

TEST_F(SinkTest, CsvGoldenAndReadBack) {
  const std::string p = path("results.csv");
  auto s = make_csv_sink(p);
  run_all(*s);
  s.reset();
  expect_golden("results.csv", read_file(p));
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
  EXPECT_TRUE(parse_csv(read_file(p)).rows.empty());
  s->add(golden_rows()[0]);
  EXPECT_EQ(parse_csv(read_file(p)).rows.size(), 1u);
  const std::string before_finish = read_file(p);
  s->finish(golden_outcome());
  EXPECT_EQ(read_file(p), before_finish);  // no footer: the file stays a plain table
}

TEST_F(SinkTest, CsvCommandLineComment) {
  const std::string p = path("results.csv");
  auto s = make_csv_sink(p);
  s->begin(Json::object({{"command_line", Json::array({"ccbench", "--tag", "it's", ""})}}));
  EXPECT_TRUE(read_file(p).starts_with(
      "# ccbench results, schema_version 3\n# command: ccbench --tag 'it'\\''s' ''\ncollective,impl,"))
      << read_file(p);
  auto t = make_csv_sink(path("other.csv"));
  t->begin(Json::object({{"command_line", "ccbench run\n-b 8"}}));
  EXPECT_TRUE(read_file(path("other.csv"))
                  .starts_with("# ccbench results, schema_version 3\n# command: ccbench run -b 8\ncollective"));
}

// ---------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------

TEST_F(SinkTest, JsonSaysRunningUntilFinish) {
  const std::string p = path("run.json");
  auto s = make_json_sink(p);
  Json j = Json::parse(read_file(p));  // written at once, so a run that dies early still leaves it
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["incomplete_reason"], kRunningReason);

  s->begin(golden_context());
  s->add(golden_rows()[2]);
  j = Json::parse(read_file(p));
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
  j = Json::parse(read_file(p));
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
  const Json j = Json::parse(read_file(p));
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["incomplete_reason"], "timeout at 16 MiB (allreduce/ring)");
  EXPECT_EQ(j["exit_code"], 5);
  EXPECT_EQ(j["rows"].size(), golden_rows().size());
  EXPECT_EQ(j["rows"].back()["reason"], "timeout after 30 s\nwaiting for rank 2 (node-b)");
  EXPECT_EQ(j["rows"][1]["algorithm"], "RING/LL 2ch");
}

// ---------------------------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------------------------

TEST_F(SinkTest, MarkdownGolden) {
  const std::string p = path("results.md");
  auto s = make_markdown_sink(p);
  s->begin(golden_context());
  EXPECT_NE(read_file(p).find("**running**"), std::string::npos);
  for (const RunRecord& r : golden_rows()) s->add(r);
  EXPECT_NE(read_file(p).find("16 MiB"), std::string::npos);  // rewritten after every row
  s->finish(golden_outcome());
  expect_golden("results.md", read_file(p));
}

TEST_F(SinkTest, MarkdownEscapesTableCells) {
  const std::string p = path("results.md");
  auto s = make_markdown_sink(p);
  s->begin(Json::object());
  RunRecord r = row("ring", "shm", 8, false);
  r.status = RowStatus::skipped;
  r.reason = "a|b\nc";
  s->add(r);
  EXPECT_NE(read_file(p).find("| skipped: a\\|b c |\n"), std::string::npos) << read_file(p);
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
  write_file_atomically(p, "first");
  write_file_atomically(p, "second");
  EXPECT_EQ(read_file(p), "second");
  EXPECT_FALSE(std::filesystem::exists(p + ".tmp"));
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
  EXPECT_THROW(f.add(row("ring", "shm", 8, false)), Error);
  EXPECT_THROW(f.finish(RunOutcome{}), Error);
  const std::vector<std::string> expected{"begin", "add ring", "finish"};
  EXPECT_EQ(a, expected);
  EXPECT_EQ(b, expected);
}

}  // namespace
}  // namespace ccbench
