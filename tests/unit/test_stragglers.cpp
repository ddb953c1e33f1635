// results/stragglers and the per-rank columns of the run record: the slowest rank against the
// median rank, who is named after the table and when, and the columns through CSV and JSON.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "results/record.h"
#include "results/stragglers.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

RunRecord row_with_medians(std::vector<double> medians, std::uint64_t bytes = 1 << 20) {
  RunRecord r = RecordBuilder().bytes(bytes);
  r.rank_times_us = medians;
  r.rank_median_us = std::move(medians);
  return r;
}

TEST(Stragglers, SlowestRankAgainstTheMedianRank) {
  const RankSpread s = rank_spread({100, 102, 135, 101});
  EXPECT_EQ(s.slowest_rank, 2);
  EXPECT_DOUBLE_EQ(s.slowest_us, 135);
  EXPECT_DOUBLE_EQ(s.median_us, 101);  // the lower middle of 100 101 102 135: a real rank's time
  EXPECT_NEAR(s.ratio(), 135.0 / 101.0, 1e-12);
}

TEST(Stragglers, EmptyAndZeroTimesGiveNoRatioAboveOne) {
  EXPECT_EQ(rank_spread({}).slowest_rank, -1);
  EXPECT_DOUBLE_EQ(rank_spread({0, 0}).ratio(), 1.0);
  EXPECT_DOUBLE_EQ(rank_spread({7}).ratio(), 1.0);
}

TEST(Stragglers, ColumnsNameTheSlowestRankAndItsHost) {
  RunRecord r = row_with_medians({10, 10, 10, 13.5});
  fill_straggler_columns(r, {"a", "a", "b", "b"});
  ASSERT_TRUE(r.slowest_rank && r.straggler_ratio && r.rank_spread);
  EXPECT_EQ(*r.slowest_rank, 3);
  EXPECT_EQ(r.slowest_host, "b");
  EXPECT_NEAR(*r.straggler_ratio, 1.35, 1e-12);
  EXPECT_NEAR(*r.rank_spread, 0.35, 1e-12);
}

TEST(Stragglers, ReportNamesARankBehindByMoreThanTheThresholdOnce) {
  std::vector<RunRecord> rows;
  for (double slow : {13.5, 12.5, 10.1}) {  // behind by 35 %, 25 %, 1 %
    rows.push_back(row_with_medians({10, 10, 10, slow}, (rows.size() + 1) << 20));
    fill_straggler_columns(rows.back(), {"n0", "n0", "n1", "n1"});
  }
  const std::string text = straggler_report(rows, 0.2);
  EXPECT_EQ(text,
            "# straggler: rank 3 (host n1) 1.35x the median rank in allreduce/ring float sum 1M out-of-place "
            "(slowest by more than 20 % in 2 of 3 rows)\n")
      << text;
  EXPECT_EQ(straggler_report(rows, 0.4), "");  // none is 40 % behind
}

TEST(Stragglers, ReportPutsTheRankBehindInMostRowsFirst) {
  std::vector<RunRecord> rows{row_with_medians({10, 20, 10}), row_with_medians({10, 10, 15}),
                              row_with_medians({10, 10, 16})};
  for (RunRecord& r : rows) fill_straggler_columns(r, {});
  const std::string text = straggler_report(rows, 0.2);
  EXPECT_EQ(text.rfind("# straggler: rank 2 1.60x", 0), 0u) << text;  // behind in 2 rows
  EXPECT_NE(text.find("\n# straggler: rank 1 2.00x"), std::string::npos) << text;
}

TEST(Stragglers, ReportIsPerGroupAndSkipsRowsWithoutTimes) {
  std::vector<RunRecord> rows{row_with_medians({10, 20}), row_with_medians({10, 20}), RunRecord{}};
  rows[1].group = "pair 2-3";
  for (RunRecord& r : rows) fill_straggler_columns(r, {});
  const std::string text = straggler_report(rows, 0.2);
  EXPECT_NE(text.find("# straggler: rank 1 2.00x the median rank in allreduce/ring float sum 1M out-of-place "
                      "(slowest by more than 20 % in 1 of 1 rows)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("out-of-place group pair 2-3 (slowest"), std::string::npos) << text;
}

TEST(Stragglers, PerRankColumnsSurviveCsvAndJson) {
  RunRecord r = row_with_medians({1.5, 2.25, 40});
  fill_straggler_columns(r, {"h", "h", "h"});
  r.host = "h";
  r.group_outlier_ratio = 1.5;
  const Json j = to_json(r);
  EXPECT_EQ(j["rank_median_us"], Json::parse("[1.5, 2.25, 40]"));
  EXPECT_EQ(j["slowest_rank"], 2);
  EXPECT_EQ(to_json(record_from_json(j)), j);

  std::vector<std::string> header;
  for (const Column& c : record_columns()) header.push_back(c.csv_header);
  const RunRecord back = record_from_csv(header, to_csv_fields(r));
  EXPECT_EQ(back.rank_median_us, r.rank_median_us);
  EXPECT_EQ(back.slowest_rank, 2);
  EXPECT_EQ(back.slowest_host, "h");
  EXPECT_EQ(back.host, "h");
  EXPECT_NEAR(*back.straggler_ratio, *r.straggler_ratio, 1e-4);  // CSV keeps 6 significant digits
  EXPECT_DOUBLE_EQ(*back.group_outlier_ratio, 1.5);

  // A row that measured nothing: empty cells, null in JSON, and they read back as unset.
  const RunRecord empty;
  EXPECT_TRUE(to_json(empty)["straggler_ratio"].is_null());
  const RunRecord empty_back = record_from_csv(header, to_csv_fields(empty));
  EXPECT_FALSE(empty_back.slowest_rank);
  EXPECT_FALSE(empty_back.straggler_ratio);
  EXPECT_TRUE(empty_back.rank_times_us.empty());
}

TEST(Stragglers, FilesWithoutThePerRankColumnsStillRead) {
  Json j = to_json(RunRecord{});
  for (const char* k : {"host", "slowest_rank", "slowest_host", "rank_spread", "straggler_ratio",
                        "group_outlier_ratio", "rank_times_us", "rank_median_us"})
    j.erase(k);
  const RunRecord r = record_from_json(j);
  EXPECT_FALSE(r.slowest_rank);
  EXPECT_TRUE(r.rank_median_us.empty());
}

}  // namespace
}  // namespace ccbench
