// results/: statistics, run records (JSON and CSV round trips) and the CSV reader.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/size.h"
#include "results/csv_reader.h"
#include "results/format.h"
#include "results/record.h"
#include "results/stats.h"
#include "usage_error.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

// ---------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------

TEST(Stats, EmptyInputGivesZeros) {
  const TimeStats t = summarize({});
  EXPECT_EQ(t.median, 0);
  EXPECT_EQ(t.min, 0);
  EXPECT_EQ(t.max, 0);
  EXPECT_EQ(t.p95, 0);
  EXPECT_EQ(t.mean, 0);
  EXPECT_EQ(t.cv, 0);
}

TEST(Stats, SingleSampleHasNoSpread) {
  const TimeStats t = summarize({7.5});
  EXPECT_EQ(t.median, 7.5);
  EXPECT_EQ(t.min, 7.5);
  EXPECT_EQ(t.max, 7.5);
  EXPECT_EQ(t.p95, 7.5);
  EXPECT_EQ(t.mean, 7.5);
  EXPECT_EQ(t.cv, 0);
}

TEST(Stats, MedianOfOddAndEvenCountsIgnoresOrder) {
  EXPECT_EQ(summarize({3, 1, 2}).median, 2);
  EXPECT_EQ(summarize({4, 1, 3, 2}).median, 2.5);
}

TEST(Stats, P95IsTheNearestRank) {
  std::vector<double> s;
  for (int i = 20; i >= 1; --i) s.push_back(i);
  EXPECT_EQ(summarize(s).p95, 19);  // ceil(0.95 * 20) = 19th smallest
  s.clear();
  for (int i = 1; i <= 100; ++i) s.push_back(i);
  EXPECT_EQ(summarize(s).p95, 95);
  EXPECT_EQ(summarize({1, 2, 3}).p95, 3);  // ceil(2.85) = 3
  s.clear();
  for (int i = 1; i <= 10; ++i) s.push_back(i);
  EXPECT_EQ(summarize(s).p95, 10);  // ceil(9.5) = 10
}

TEST(Stats, CoefficientOfVariationUsesTheSampleStandardDeviation) {
  // mean 5, sum of squared deviations 32, sample variance 32 / 7.
  const TimeStats t = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(t.mean, 5);
  EXPECT_EQ(t.min, 2);
  EXPECT_EQ(t.max, 9);
  EXPECT_NEAR(t.cv, std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
  EXPECT_EQ(summarize({3, 3, 3}).cv, 0);
}

TEST(Stats, GigabytesPerSecondIsDecimal) {
  EXPECT_DOUBLE_EQ(gigabytes_per_second(1e9, 1e6), 1.0);           // 1 GB in 1 s
  EXPECT_DOUBLE_EQ(gigabytes_per_second(2147483648.0, 6330.97), 2147483648.0 / 6330.97e3);
  EXPECT_EQ(gigabytes_per_second(1024, 0), 0);
}

TEST(Format, SizesInBinaryUnits) {
  EXPECT_EQ(human_size(0), "0 B");
  EXPECT_EQ(human_size(1023), "1023 B");
  EXPECT_EQ(human_size(1024), "1 KiB");
  EXPECT_EQ(human_size(1536), "1.50 KiB");
  EXPECT_EQ(human_size(16u << 20), "16 MiB");
  EXPECT_EQ(human_size(4ull << 30), "4 GiB");
  EXPECT_EQ(human_size(~0ull), "16.00 EiB");
  EXPECT_EQ(single_line("a\r\nb\tc"), "a  b c");
}

// ---------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------

RunRecord sample_record() {
  return RecordBuilder()
      .float_bytes(1048576)
      .in_place()
      .ranks(4, 2, 2)
      .iterations(20, 5)
      .times_us(123.45, 120.5, 110.25, 140.75, 150.125)
      .cv(0.0625)
      .algbw(8.49395)
      .busbw(12.7409, 13.0514)
      .checked(3)
      .status(RowStatus::wrong, "rank 1 (node-b) index 17: expected \"6\", got 7,\nthen 2 more");
}

TEST(Record, ColumnsHaveUniqueKeysAndUnitsInHeaders) {
  const auto& cols = record_columns();
  ASSERT_GE(cols.size(), 20u);
  for (size_t i = 0; i < cols.size(); ++i)
    for (size_t j = i + 1; j < cols.size(); ++j) {
      EXPECT_STRNE(cols[i].key, cols[j].key);
      EXPECT_STRNE(cols[i].csv_header, cols[j].csv_header);
    }
  EXPECT_EQ(std::string(cols[0].key), "collective");
}

TEST(Record, JsonRoundTripKeepsEveryField) {
  const RunRecord r = sample_record();
  const Json j = to_json(r);
  // Keys come in record_columns() order.
  size_t i = 0;
  for (const auto& [key, value] : j.items()) EXPECT_EQ(key, record_columns()[i++].key);
  EXPECT_EQ(j["status"], "wrong");
  EXPECT_EQ(to_json(record_from_json(j)), j);
  EXPECT_EQ(record_from_json(Json::parse(j.dump())).reason, r.reason);
}

TEST(Record, JsonWithMissingOrBadFieldIsAUsageError) {
  Json j = to_json(sample_record());
  j.erase("busbw[GB/s]");  // not a key: keys are the member names
  j.erase("busbw_gbps");
  try {
    record_from_json(j);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("busbw_gbps"), std::string::npos) << e.what();
  }
  j = to_json(sample_record());
  j["ranks"] = "four";
  EXPECT_THROW(record_from_json(j), Error);
  j = to_json(sample_record());
  j["status"] = "great";
  try {
    record_from_json(j);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("great"), std::string::npos) << e.what();
  }
}

std::vector<std::string> csv_header_names() {
  std::vector<std::string> h;
  for (const Column& c : record_columns()) h.push_back(c.csv_header);
  return h;
}

TEST(Record, CsvFieldsRoundTrip) {
  const RunRecord r = sample_record();
  const std::vector<std::string> fields = to_csv_fields(r);
  ASSERT_EQ(fields.size(), record_columns().size());
  EXPECT_EQ(to_json(record_from_csv(csv_header_names(), fields)), to_json(r));
}

TEST(Record, CsvRoundTripThroughTheParserQuotesTheReason) {
  RunRecord r = sample_record();
  const std::string text = csv_line(csv_header_names()) + csv_line(to_csv_fields(r));
  // The reason holds a comma, quotes and a newline: it must be quoted with doubled quotes.
  EXPECT_NE(text.find("\"rank 1 (node-b) index 17: expected \"\"6\"\", got 7,\nthen 2 more\""), std::string::npos)
      << text;
  const CsvTable t = parse_csv(text);
  ASSERT_EQ(t.rows.size(), 1u);
  const RunRecord back = record_from_csv(t.header, t.rows[0]);
  EXPECT_EQ(back.reason, r.reason);
  EXPECT_EQ(to_json(back), to_json(r));
}

TEST(Record, CsvColumnsAreFoundByName) {
  const RunRecord r = sample_record();
  std::vector<std::string> h = csv_header_names(), f = to_csv_fields(r);
  std::reverse(h.begin(), h.end());
  std::reverse(f.begin(), f.end());
  h.push_back("extra[unit]");  // a newer file's extra column is ignored
  f.push_back("42");
  EXPECT_EQ(to_json(record_from_csv(h, f)), to_json(r));
}

TEST(Record, CsvBadValueNamesTheColumn) {
  std::vector<std::string> f = to_csv_fields(sample_record());
  const auto h = csv_header_names();
  const size_t i = std::find(h.begin(), h.end(), "time_avg[us]") - h.begin();
  f[i] = "12.5us";
  try {
    record_from_csv(h, f);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("time_avg[us]"), std::string::npos) << e.what();
  }
  f = to_csv_fields(sample_record());
  f[std::find(h.begin(), h.end(), "in_place") - h.begin()] = "yes";
  EXPECT_THROW(record_from_csv(h, f), Error);
  auto short_header = h;
  const auto device = std::find(h.begin(), h.end(), "device") - h.begin();
  short_header.erase(short_header.begin() + device);
  f = to_csv_fields(sample_record());
  f.erase(f.begin() + device);
  EXPECT_THROW(record_from_csv(short_header, f), Error);  // a required column is missing
}

// Schema version 1 had no `algorithm` column: such files still read, with the column empty.
TEST(Record, VersionOneFilesWithoutAlgorithmStillRead) {
  RunRecord r = sample_record();
  r.algorithm = "RING/LL 2ch";
  std::vector<std::string> h = csv_header_names(), f = to_csv_fields(r);
  const auto at = std::find(h.begin(), h.end(), "algorithm") - h.begin();
  ASSERT_LT(static_cast<size_t>(at), h.size());
  EXPECT_EQ(record_from_csv(h, f).algorithm, "RING/LL 2ch");
  h.erase(h.begin() + at);
  f.erase(f.begin() + at);
  EXPECT_EQ(record_from_csv(h, f).algorithm, "");
  Json j = to_json(r);
  j.erase("algorithm");
  const RunRecord back = record_from_json(j);
  EXPECT_EQ(back.algorithm, "");
  EXPECT_EQ(back.transport, r.transport);
}

// "Not checked" is its own state: an empty CSV field, a JSON null, N/A for people; never -1.
TEST(Record, NotCheckedIsEmptyInCsvAndNullInJson) {
  RunRecord r = sample_record();
  r.wrong.reset();
  r.status = RowStatus::ok;
  r.reason = "not checked (-c 0)";
  const auto h = csv_header_names();
  const size_t at = std::find(h.begin(), h.end(), "wrong[elements]") - h.begin();
  const std::vector<std::string> f = to_csv_fields(r);
  EXPECT_EQ(f[at], "");
  EXPECT_FALSE(record_from_csv(h, f).wrong.has_value());
  const Json j = to_json(r);
  EXPECT_TRUE(j["wrong"].is_null());
  EXPECT_FALSE(record_from_json(j).wrong.has_value());
  EXPECT_EQ(wrong_text(r), "N/A");
  r.wrong = 0;
  EXPECT_EQ(to_csv_fields(r)[at], "0");
  EXPECT_EQ(wrong_text(r), "0");
}

// Files written before the empty field marked an unchecked row with -1: read as not checked.
TEST(Record, OldMinusOneReadsAsNotChecked) {
  std::vector<std::string> f = to_csv_fields(sample_record());
  const auto h = csv_header_names();
  const size_t at = std::find(h.begin(), h.end(), "wrong[elements]") - h.begin();
  f[at] = "-1";
  EXPECT_FALSE(record_from_csv(h, f).wrong.has_value());
  Json j = to_json(sample_record());
  j["wrong"] = -1;
  EXPECT_FALSE(record_from_json(j).wrong.has_value());
  j["wrong"] = -2;  // no meaning: an error naming the column
  try {
    record_from_json(j);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("wrong[elements]"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// CSV reader
// ---------------------------------------------------------------------------------------------

// The usage error parse_csv throws for `text`; fails the test when none is thrown.
std::string csv_error(const std::string& text) {
  try {
    parse_csv(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << text;
  return {};
}

TEST(CsvReader, QuotedFields) {
  const CsvTable t = parse_csv("a,b,c\n\"x,1\",\"say \"\"hi\"\"\",\"\"\nplain,,last\n");
  EXPECT_EQ(t.header, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"x,1", "say \"hi\"", ""}));
  EXPECT_EQ(t.rows[1], (std::vector<std::string>{"plain", "", "last"}));
  EXPECT_EQ(t.row_lines, (std::vector<size_t>{2, 3}));
}

TEST(CsvReader, EmbeddedNewlineStaysInTheField) {
  const CsvTable t = parse_csv("a,b\n\"line 1\nline 2\",z\nnext,row\n");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][0], "line 1\nline 2");
  EXPECT_EQ(t.rows[1][0], "next");
  EXPECT_EQ(t.row_lines, (std::vector<size_t>{3, 4}));
}

TEST(CsvReader, CrLfLineEnds) {
  const CsvTable t = parse_csv("# comment\r\na,b\r\n1,2\r\n\"x\r\ny\",3\r\n");
  EXPECT_EQ(t.header, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(t.rows[1][0], "x\r\ny");  // inside quotes the bytes are kept
}

TEST(CsvReader, CommentsBeforeTheHeaderAreSkipped) {
  const CsvTable t = parse_csv("# ccbench results, schema_version 1\n# command: a \"b\", c\n\na,b\n1,2\n");
  EXPECT_EQ(t.header, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.row_lines[0], 5u);
  // After the header a '#' is data.
  const CsvTable u = parse_csv("a,b\n#1,2\n");
  ASSERT_EQ(u.rows.size(), 1u);
  EXPECT_EQ(u.rows[0][0], "#1");
}

TEST(CsvReader, SpacesBelongToTheField) {
  const CsvTable t = parse_csv("a,b\n x , y \n");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{" x ", " y "}));
}

TEST(CsvReader, LastLineWithoutNewlineAndHeaderOnly) {
  const CsvTable t = parse_csv("a,b\n1,2");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(parse_csv("a,b\n").rows.empty());
  EXPECT_EQ(parse_csv("\xEF\xBB\xBF" "a,b\n").header[0], "a");  // a spreadsheet's BOM
}

TEST(CsvReader, WrongFieldCountNamesTheLine) {
  EXPECT_NE(csv_error("a,b\n1,2\n3\n").find("line 3"), std::string::npos);
  EXPECT_NE(csv_error("# one\n# two\na,b\n1,2,3\n").find("line 4"), std::string::npos);
  const std::string e = csv_error("a,b\n1,2\n3,4,5");
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("3 fields"), std::string::npos) << e;
}

TEST(CsvReader, MalformedQuotingNamesTheLine) {
  EXPECT_NE(csv_error("a,b\n1,2\n\"x\"y,3\n").find("line 3"), std::string::npos);
  EXPECT_NE(csv_error("a,b\n1,x\"y\n").find("line 2"), std::string::npos);
  const std::string e = csv_error("a,b\n1,\"open\n");
  EXPECT_NE(e.find("not closed"), std::string::npos) << e;
}

TEST(CsvReader, EmptyInputHasNoHeader) {
  EXPECT_NE(csv_error("").find("no header"), std::string::npos);
  EXPECT_NE(csv_error("# only a comment\n\n").find("no header"), std::string::npos);
}

TEST(CsvReader, CsvLineQuotesOnlyWhereNeeded) {
  EXPECT_EQ(csv_line({"a", "b c", ""}), "a,b c,\n");
  EXPECT_EQ(csv_line({"x,y", "say \"hi\"", "l1\nl2", "cr\r"}), "\"x,y\",\"say \"\"hi\"\"\",\"l1\nl2\",\"cr\r\"\n");
  EXPECT_EQ(csv_line({}), "\n");
  EXPECT_EQ(parse_csv("h\n" + csv_line({""})).rows.size(), 1u);  // a lone empty field still makes a row
  const std::vector<std::string> nasty{"\"", ",", "\"\"", " lead", "trail ", "a\r\nb", "#x"};
  const CsvTable t = parse_csv(csv_line({"1", "2", "3", "4", "5", "6", "7"}) + csv_line(nasty));
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0], nasty);
}

class CsvFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ccbench_test_results_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::filesystem::path dir_;
};

TEST_F(CsvFile, ReadResultsCsv) {
  RunRecord a = sample_record(), b = sample_record();
  b.in_place = false;
  b.status = RowStatus::skipped;
  b.reason = "no, \"really\"";
  const std::string p = write("r.csv", "# ccbench results, schema_version 2\n" + csv_line(csv_header_names()) +
                                           csv_line(to_csv_fields(a)) + csv_line(to_csv_fields(b)));
  const std::vector<RunRecord> rs = read_results_csv(p);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(to_json(rs[0]), to_json(a));
  EXPECT_EQ(to_json(rs[1]), to_json(b));
}

// A results.csv of schema version 1 has no `algorithm` column and is still a results file.
TEST_F(CsvFile, ReadsVersionOneFiles) {
  std::vector<std::string> h = csv_header_names(), f = to_csv_fields(sample_record());
  const auto at = std::find(h.begin(), h.end(), "algorithm") - h.begin();
  h.erase(h.begin() + at);
  f.erase(f.begin() + at);
  const std::string p = write("v1.csv", "# ccbench results, schema_version 1\n" + csv_line(h) + csv_line(f));
  const std::vector<RunRecord> rs = read_results_csv(p);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].algorithm, "");
  EXPECT_EQ(rs[0].busbw_gbps, sample_record().busbw_gbps);
  h.erase(std::find(h.begin(), h.end(), "busbw[GB/s]"));  // a required column still is
  EXPECT_THROW(read_results_csv(write("v1-short.csv", csv_line(h))), Error);
}

// Schema 4 names the sweep of a repeated run (-N) in `cycle`; files before it repeated the rows of
// a key without one: read back, the k-th row of a key is cycle k, as -N wrote them.
TEST_F(CsvFile, RepeatedRowsOfFilesWithoutACycleColumnAreNumberedInOrder) {
  std::vector<std::string> h = csv_header_names();
  const auto at = std::find(h.begin(), h.end(), "cycle") - h.begin();
  ASSERT_LT(static_cast<size_t>(at), h.size());
  h.erase(h.begin() + at);
  RunRecord a = sample_record(), b = sample_record();
  b.bytes *= 2;
  std::string text = "# ccbench results, schema_version 3\n" + csv_line(h);
  for (const RunRecord& r : {a, b, a, b, a}) {
    std::vector<std::string> f = to_csv_fields(r);
    f.erase(f.begin() + at);
    text += csv_line(f);
  }
  const std::vector<RunRecord> rs = read_results_csv(write("v3.csv", text));
  ASSERT_EQ(rs.size(), 5u);
  EXPECT_EQ((std::vector<int>{rs[0].cycle, rs[1].cycle, rs[2].cycle, rs[3].cycle, rs[4].cycle}),
            (std::vector<int>{1, 1, 2, 2, 3}));
  // With the column, the file says it: nothing renumbered.
  a.cycle = 7;
  const std::vector<RunRecord> own = read_results_csv(write("v4.csv", csv_line(csv_header_names()) +
                                                                      csv_line(to_csv_fields(a))));
  EXPECT_EQ(own.at(0).cycle, 7);
}

TEST_F(CsvFile, AnUnknownSchemaVersionIsRefusedNamingTheVersionsRead) {
  const std::string body = csv_line(csv_header_names()) + csv_line(to_csv_fields(sample_record()));
  const std::string p = write("v99.csv", "# ccbench results, schema_version 99\n" + body);
  const std::string m = usage_error([&] { read_results_csv(p); });
  EXPECT_NE(m.find(p + ":1: schema_version 99 is not one this ccbench reads (it reads 1 to 4)"), std::string::npos) << m;
  EXPECT_NE(usage_error([&] { read_result_set(p); }).find("schema_version 99"), std::string::npos);
  // run.json beside the CSV is checked too.
  const std::string csv = write("results.csv", "# ccbench results, schema_version 4\n" + body);
  write("run.json", R"({"schema_version": 99, "complete": true, "context": {}, "rows": []})");
  const std::string j = usage_error([&] { read_result_set(csv); });
  EXPECT_NE(j.find("run.json: schema_version 99 is not one this ccbench reads (it reads 1 to 4)"), std::string::npos) << j;
}

TEST(Record, CycleRoundTripsAndAZeroCycleIsRefused) {
  RunRecord r = sample_record();
  r.cycle = 3;
  EXPECT_EQ(record_from_json(to_json(r)).cycle, 3);
  EXPECT_EQ(record_from_csv(csv_header_names(), to_csv_fields(r)).cycle, 3);
  Json j = to_json(r);
  j["cycle"] = 0;
  const std::string m = usage_error([&] { record_from_json(j); });
  EXPECT_NE(m.find("column 'cycle': 0 is not a cycle (valid: 1 or more)"), std::string::npos) << m;
  j.erase("cycle");  // files before schema 4
  EXPECT_EQ(record_from_json(j).cycle, 1);
}

TEST_F(CsvFile, ErrorsNameTheFileAndLine) {
  std::vector<std::string> f = to_csv_fields(sample_record());
  f[record_columns().size() - 2] = "maybe";  // status
  const std::string p = write("bad.csv", "# c\n" + csv_line(csv_header_names()) + csv_line(f));
  try {
    read_results_csv(p);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(m.find(p + ": line 4"), std::string::npos) << m;  // the reason spans lines 3 and 4
    EXPECT_NE(m.find("maybe"), std::string::npos) << m;
  }
  try {
    read_csv_file((dir_ / "missing.csv").string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("missing.csv"), std::string::npos) << e.what();
  }
  const std::string q = write("short.csv", "a,b\n1\n");
  try {
    read_csv_file(q);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(q + ": line 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ccbench
