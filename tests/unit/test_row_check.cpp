// results/row_check and the readers' marking of damaged rows: nan, inf, negative and impossible
// values found with their file and line; writers seal rows (results.csv never holds "nan").
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "results/csv_reader.h"
#include "results/row_check.h"
#include "results/sink.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

// 1 MiB all-reduce on 4 ranks: 100 us, busbw 1.5 x algbw.
RunRecord sound_row() {
  const double algbw = (1 << 20) / 100e3;
  return RecordBuilder()
      .float_bytes(1 << 20)
      .ranks(4)
      .iterations(20)
      .times_us(100, 100, 90, 120, 150)
      .cv(0.1)
      .algbw(algbw)
      .busbw(1.5 * algbw, 1.5 * algbw)
      .checked(0);
}

std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "ccbench-row-check-" + std::to_string(getpid()) + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(RowCheck, ASoundRowHasNoDamage) {
  EXPECT_EQ(row_damage(sound_row()), "");
  RunRecord skipped;  // a skipped row's figures are all zero
  skipped.status = RowStatus::skipped;
  EXPECT_EQ(row_damage(skipped), "");
}

TEST(RowCheck, NotFiniteAndNegativeFiguresAreDamage) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  RunRecord r = sound_row();
  r.busbw_gbps = nan;
  EXPECT_EQ(row_damage(r), "busbw[GB/s] is nan");
  r = sound_row();
  r.time_median_us = -1;
  EXPECT_EQ(row_damage(r), "time_median[us] is negative (-1)");
  r = sound_row();
  r.busbw_median_gbps = inf;
  r.time_cv = -inf;
  EXPECT_EQ(row_damage(r), "time_cv is -inf; busbw_median[GB/s] is inf");
  r = sound_row();
  r.straggler_ratio = nan;
  r.rank_times_us = {10, -3};
  r.health.temp_max_c = inf;
  EXPECT_EQ(row_damage(r), "straggler_ratio is nan; rank_times[us] is negative (-3); gpu_temp_max[C] is inf");
  r = sound_row();
  r.status = RowStatus::skipped;  // a row that measured nothing holds no nan either
  r.time_avg_us = nan;
  EXPECT_EQ(row_damage(r), "time_avg[us] is nan");
}

TEST(RowCheck, FiguresThatContradictEachOtherAreDamage) {
  RunRecord r = sound_row();
  r.time_min_us = 102;  // above the median, beyond rounding
  EXPECT_EQ(row_damage(r), "time_min[us] 102 is above time_median[us] 100");
  r = sound_row();
  r.time_cv = 5;  // 20 samples spread at most sqrt(20) = 4.47
  EXPECT_EQ(row_damage(r), "time_cv 5 is above sqrt(iterations 20), the most 20 samples can spread");
  r = sound_row();
  r.busbw_gbps = 2.1 * r.algbw_gbps;  // no bus factor reaches 2
  EXPECT_EQ(row_damage(r), "busbw[GB/s] 22.0201 is above 20.9715, the most that size[B] 1048576 in time_avg[us] 100 "
                           "allows");
  r = sound_row();
  r.time_avg_us = 0;  // no time: no bandwidth at all
  EXPECT_NE(row_damage(r).find("algbw[GB/s] 10.4858 is above 0"), std::string::npos) << row_damage(r);
  r = sound_row();
  r.busbw_median_gbps = 1.5 * r.algbw_gbps * 1.005;  // within rounding of a figure printed with fewer digits
  EXPECT_EQ(row_damage(r), "");
  r.status = RowStatus::failed;  // figures of a row that measured nothing are not compared with each other
  r.time_min_us = 1000;
  EXPECT_EQ(row_damage(r), "");
}

TEST(RowCheck, SealedRowsAreWhatAWriterMayWrite) {
  RunRecord r = sound_row();
  EXPECT_EQ(to_json(sealed(r)), to_json(r));
  r.efficiency = std::numeric_limits<double>::infinity();  // busbw over a ceiling of 0
  r.rank_spread = std::nan("");
  RunRecord s = sealed(r);
  EXPECT_FALSE(s.efficiency.has_value());
  EXPECT_FALSE(s.rank_spread.has_value());
  EXPECT_EQ(s.status, RowStatus::ok);
  r = sound_row();
  r.time_median_us = std::nan("");
  r.reason = "x";
  s = sealed(r);
  EXPECT_EQ(s.status, RowStatus::failed);
  EXPECT_EQ(s.reason, "impossible figures, not written (time_median[us] is nan): x");
  EXPECT_EQ(s.time_median_us, 0);
  EXPECT_EQ(s.busbw_gbps, 0);
  EXPECT_EQ(row_damage(s), "");
}

TEST(RowCheck, WritersNeverWriteNan) {
  const std::string dir = temp_dir("writers");
  FanoutSink sinks;
  sinks.add_sink(make_csv_sink(dir + "/results.csv"));
  sinks.add_sink(make_json_sink(dir + "/run.json"));
  sinks.begin(Json::object());
  RunRecord r = sound_row();
  r.busbw_gbps = std::nan("");
  r.straggler_ratio = std::numeric_limits<double>::infinity();
  sinks.add(r);
  sinks.finish(RunOutcome{});
  std::ifstream in(dir + "/results.csv");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* value : {",nan,", ",inf,", ",-nan,", ",-inf,"})  // as a field; the reason may name them
    EXPECT_EQ(text.find(value), std::string::npos) << text;
  const ResultSet back = read_result_set(dir);
  ASSERT_EQ(back.rows.size(), 1u);
  EXPECT_EQ(back.rows[0].status, RowStatus::failed);
  EXPECT_EQ(back.damage(0), "");
}

// A results.csv of two rows, the second with `value` in every time and bandwidth column.
std::string csv_with(const std::string& value) {
  RunRecord r = sound_row();
  std::string text = "# ccbench results\n" + csv_line([] {
                       std::vector<std::string> h;
                       for (const Column& c : record_columns()) h.push_back(c.csv_header);
                       return h;
                     }());
  text += csv_line(to_csv_fields(r));
  std::vector<std::string> f = to_csv_fields(r);
  for (size_t i = 0; i < record_columns().size(); ++i) {
    const std::string h = record_columns()[i].csv_header;
    if (h.starts_with("time_") || h.find("bw") != std::string::npos) f[i] = value;
  }
  return text + csv_line(f);
}

TEST(RowCheck, ReadersMarkDamagedRowsWithFileAndLine) {
  for (const std::string value : {"nan", "-1", "inf"}) {
    const std::string dir = temp_dir("read-" + value);
    std::ofstream(dir + "/results.csv") << csv_with(value);
    const ResultSet s = read_result_set(dir);
    ASSERT_EQ(s.rows.size(), 2u) << value;
    EXPECT_EQ(s.damage(0), "");
    EXPECT_EQ(s.where(1), dir + "/results.csv:4");
    const auto damaged = damaged_rows(s);
    ASSERT_EQ(damaged.size(), 1u) << value;
    EXPECT_EQ(damaged[0].rfind(dir + "/results.csv:4: time_avg[us] is ", 0), 0u) << damaged[0];
  }
}

TEST(RowCheck, RunJsonGivesTheRunsOwnOutcome) {
  const std::string dir = temp_dir("outcome");
  std::ofstream(dir + "/results.csv") << csv_with("1");
  ResultSet s = read_result_set(dir);
  EXPECT_FALSE(s.exit_code.has_value());
  EXPECT_EQ(s.verdict, "");
  EXPECT_EQ(s.outcome_note, "no run.json beside " + dir + "/results.csv");
  std::ofstream(dir + "/run.json") << R"j({"exit_code": 5, "verdict": "FAILED (exit code 5: timeout)", "context": {}})j";
  s = read_result_set(dir);
  EXPECT_EQ(s.exit_code, 5);
  EXPECT_EQ(s.verdict, "FAILED (exit code 5: timeout)");
  std::ofstream(dir + "/run.json") << R"({"exit_code": null, "verdict": null, "complete": false,
                                          "incomplete_reason": "running", "context": {}})";
  s = read_result_set(dir);
  EXPECT_FALSE(s.exit_code.has_value());
  EXPECT_EQ(s.outcome_note, dir + "/run.json holds no verdict (running)");
}

}  // namespace
}  // namespace ccbench
