// results/compare: `ccbench compare` between runs, noise-aware, on crafted rows and on real runs.
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "results/compare.h"
#include "results/csv_reader.h"
#include "core/error.h"

namespace ccbench {
namespace {

const std::string kData = CCBENCH_TEST_DATA_DIR;
const std::string kFixtures = CCBENCH_SOURCE_DIR "/tests/fixtures";

// A CPU row: time `us` at `bytes`, spread `cv` (p95 as far above the median).
RunRecord row(const std::string& impl, std::uint64_t bytes, double us, double cv = 0.01) {
  RunRecord r;
  r.collective = "allreduce";
  r.impl = impl;
  r.transport = "shm";
  r.device = "cpu";
  r.dtype = "float";
  r.op = "sum";
  r.bytes = bytes;
  r.count = bytes / 4;
  r.ranks = 2;
  r.ranks_per_node = 2;
  r.nodes = 1;
  r.time_avg_us = r.time_median_us = r.time_min_us = us;
  r.time_p95_us = r.time_max_us = us * (1 + cv);
  r.time_cv = cv;
  r.busbw_gbps = r.busbw_median_gbps = bytes / (us * 1e3);  // allreduce on 2 ranks: factor 1
  return r;
}

// A sweep of one impl from 8 B to 128 MiB (9 sizes): a 10 us fixed cost, then 10 GB/s.
std::vector<RunRecord> sweep(const std::string& impl, double cv = 0.01) {
  std::vector<RunRecord> rows;
  for (std::uint64_t b = 8; b <= (128u << 20); b *= 8) rows.push_back(row(impl, b, 10 + b / 1e4, cv));
  return rows;
}

CompareResult cmp(const std::vector<RunRecord>& before, const std::vector<RunRecord>& after,
                  CompareOptions o = {}) {
  return compare_runs(before, after, o);
}

int count_lines_with(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  int n = 0;
  for (std::string l; std::getline(in, l);) n += l.find(what) != std::string::npos;
  return n;
}

TEST(Compare, TwoRealRunsOfTheSameCommandOnABusyMachineDoNotFail) {
  // Two back-to-back runs of one command on a loaded 2-core machine (4 ranks): the tolerance
  // alone would flag rows that are only noise.
  const ResultSet a = read_result_set(kFixtures + "/cpu2core-20261130-np4-np8/np4-run1-results.csv");
  const ResultSet b = read_result_set(kFixtures + "/cpu2core-20261130-np4-np8/np4-run2-results.csv");
  int beyond_tolerance = 0;
  for (size_t i = 0; i < a.rows.size(); ++i)
    beyond_tolerance += b.rows[i].busbw_median_gbps < a.rows[i].busbw_median_gbps * 0.95;
  ASSERT_GT(beyond_tolerance, 10) << "the data no longer shows the noise this test is about";
  const CompareResult c = compare_runs(a.rows, b.rows, {});
  EXPECT_EQ(c.failures, 0) << c.text;
  EXPECT_EQ(c.matched, 132);
  EXPECT_NE(c.text.find("OK: 0 failures in 132 matched rows"), std::string::npos) << c.text;
}

TEST(Compare, ASlowdownBeyondTheNoiseIsFlaggedAndNamesItsCase) {
  auto before = sweep("ring"), after = before;
  for (size_t i = after.size() - 2; i < after.size(); ++i)  // the two largest sizes at half the busbw
    after[i] = row("ring", after[i].bytes, after[i].time_median_us * 2);
  const CompareResult c = cmp(before, after);
  EXPECT_EQ(c.failures, 2) << c.text;
  EXPECT_NE(c.text.find("# SLOWER (beyond 5% noise/tolerance): allreduce  impl ring  transport shm  device cpu  ranks 2 (2 "
                        "per node)  dtype float  op sum  mode eager  out-of-place  size 128 MiB  (9.99 GB/s -> 5.00 GB/s)"),
            std::string::npos)
      << c.text;
  EXPECT_NE(c.text.find("FAILED: 2 failures in 9 matched rows"), std::string::npos) << c.text;
}

TEST(Compare, ASlowdownAtOneSizeOnlyIsReportedNotCounted) {
  auto before = sweep("ring"), after = before;
  after[6] = row("ring", after[6].bytes, after[6].time_median_us * 2);  // 2 MiB only, its neighbours unchanged
  const CompareResult c = cmp(before, after);
  EXPECT_EQ(c.failures, 0) << c.text;
  EXPECT_NE(c.text.find("    2 MiB   busbw  9.54 GB/s  4.77 GB/s  0.50x     5%  slower (beyond 5%, but at this size only)\n"),
            std::string::npos) << c.text;
  CompareOptions strict;
  strict.count_isolated = true;
  EXPECT_EQ(cmp(before, after, strict).failures, 1);
  // A case measured at one size has no neighbour to tell: its slowdown counts.
  EXPECT_EQ(cmp({before[6]}, {after[6]}).failures, 1);
}

TEST(Compare, ASlowdownInsideBothRowsSpreadIsNotFlagged) {
  auto before = sweep("ring", 0.2), after = sweep("ring", 0.2);
  for (RunRecord& r : after) r = row("ring", r.bytes, r.time_median_us * 1.3, 0.2);  // 30% slower, 2 x 20% spread
  EXPECT_EQ(cmp(before, after).failures, 0) << cmp(before, after).text;
  for (RunRecord& r : after) r = row("ring", r.bytes, r.time_median_us / 1.3 * 1.5, 0.2);  // 50%: beyond
  EXPECT_EQ(cmp(before, after).failures, 9) << cmp(before, after).text;
}

TEST(Compare, SmallSizesCompareTimeLargeSizesBusbw) {
  const auto rows = sweep("ring");
  const std::string t = cmp(rows, rows).text;
  // Fixed cost 10 us: latency-bound up to twice that (8 B .. 32 KiB), bandwidth-bound above.
  EXPECT_NE(t.find("\n      8 B    time      10 us      10 us  1.00x"), std::string::npos) << t;
  EXPECT_NE(t.find("\n   32 KiB    time"), std::string::npos) << t;
  EXPECT_NE(t.find("\n  256 KiB   busbw"), std::string::npos) << t;
}

TEST(Compare, EightByteRowsWithZeroBusbwNeverFlagOnBusbw) {
  RunRecord b = row("ring", 8, 10), a = row("ring", 8, 10.2);
  b.busbw_gbps = b.busbw_median_gbps = a.busbw_gbps = a.busbw_median_gbps = 0;  // as printed: 0.00
  const CompareResult c = cmp({b}, {a});
  EXPECT_EQ(c.failures, 0) << c.text;
  EXPECT_NE(c.text.find("8 B    time"), std::string::npos) << c.text;
}

TEST(Compare, AnAbortedRunWithFewRowsFails) {
  const ResultSet full = read_result_set(kFixtures + "/cpu2core-20261130-np4-np8/np4-run1-results.csv");
  const std::vector<RunRecord> aborted(full.rows.begin(), full.rows.begin() + 5);
  const CompareResult c = cmp(full.rows, aborted);
  EXPECT_EQ(c.failures, 127) << c.text;
  EXPECT_EQ(count_lines_with(c.text, "# MISSING now: allgather  impl tree  transport shm"), 22) << c.text;
  CompareOptions allow;
  allow.allow_missing = true;
  EXPECT_EQ(cmp(full.rows, aborted, allow).failures, 0);
}

TEST(Compare, RowsTurnedSkippedFailedOrWrongFail) {
  auto before = sweep("ring"), after = before;
  for (RunRecord& r : after) r.status = RowStatus::skipped;
  const CompareResult c = cmp(before, after);
  EXPECT_EQ(c.failures, 9) << c.text;
  EXPECT_EQ(count_lines_with(c.text, "# NOW skipped: allreduce  impl ring"), 9) << c.text;
  CompareOptions allow;
  allow.allow_skipped = true;
  EXPECT_EQ(cmp(before, after, allow).failures, 0);
  after = before;
  after[0].status = RowStatus::wrong;
  after[1].status = RowStatus::failed;
  const CompareResult w = cmp(before, after, allow);  // allowing skipped rows allows nothing else
  EXPECT_EQ(w.failures, 2) << w.text;
  EXPECT_NE(w.text.find("# NOW wrong: allreduce  impl ring  transport shm  device cpu  ranks 2 (2 per node)  dtype "
                        "float  op sum  mode eager  out-of-place  size 8 B"),
            std::string::npos)
      << w.text;
  EXPECT_NE(w.text.find("# NOW failed: "), std::string::npos) << w.text;
}

TEST(Compare, RunsThatMatchNoRowFailAndSayWhy) {
  auto shm = sweep("ring"), tcp = shm;
  for (RunRecord& r : tcp) r.transport = "tcp";
  const CompareResult c = cmp(tcp, shm);
  EXPECT_EQ(c.matched, 0);
  EXPECT_EQ(c.failures, 1 + 9) << c.text;  // nothing matched, and every baseline row is missing
  EXPECT_NE(c.text.find("FAILED: no row matched; transport is tcp before and shm after (--pair transport=tcp:shm "
                        "compares them)"),
            std::string::npos)
      << c.text;
  EXPECT_EQ(cmp({}, {}).failures, 1);
}

TEST(Compare, PairsCompareTransportsAcrossRunsAndImplementationsWithinOne) {
  auto shm = sweep("ring"), tcp = shm;
  for (RunRecord& r : tcp) r.transport = "tcp";
  CompareOptions o;
  o.pairs = {parse_compare_pair("transport=tcp:shm")};
  const CompareResult across = cmp(tcp, shm, o);
  EXPECT_EQ(across.matched, 9);
  EXPECT_EQ(across.failures, 0) << across.text;
  EXPECT_NE(across.text.find("# pairing: transport tcp -> shm"), std::string::npos) << across.text;

  std::vector<RunRecord> one_run = sweep("ring");
  for (RunRecord r : sweep("mpi")) {
    r = row("mpi", r.bytes, r.time_median_us * 3);  // MPI three times slower than ring
    one_run.push_back(r);
  }
  o.pairs = {parse_compare_pair("impl=ring:mpi")};
  const CompareResult within = cmp(one_run, one_run, o);
  EXPECT_EQ(within.matched, 9);
  EXPECT_EQ(within.failures, 9) << within.text;
  EXPECT_NE(within.text.find("3.00x"), std::string::npos) << within.text;
  o.pairs = {parse_compare_pair("impl=mpi:ring")};
  EXPECT_EQ(cmp(one_run, one_run, o).failures, 0);
  for (RunRecord& r : one_run)
    if (r.impl == "mpi") r.transport = "mpi";  // as MPI rows are: a second field differs
  const CompareResult two = cmp(one_run, one_run, o);
  EXPECT_EQ(two.matched, 0);
  EXPECT_NE(two.text.find("FAILED: no row matched; transport is mpi before and shm after (--pair transport=mpi:shm "
                          "compares them) (rows as paired: impl mpi -> ring)"),
            std::string::npos) << two.text;
  o.pairs.push_back(parse_compare_pair("transport=mpi:shm"));
  EXPECT_EQ(cmp(one_run, one_run, o).matched, 9);
}

TEST(Compare, BadPairsToleranceAndFormatsAreUsageErrors) {
  for (const char* bad : {"impl", "impl=ring", "size=8:16", "impl=:nccl", "impl=ring:"}) {
    try {
      parse_compare_pair(bad);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage);
      EXPECT_NE(std::string(e.what()).find("FIELD=BEFORE:AFTER"), std::string::npos) << e.what();
    }
  }
  CompareOptions o;
  o.tolerance = 1;
  EXPECT_THROW(cmp({}, {}, o), Error);
  o = {};
  o.format = "html";
  EXPECT_THROW(cmp({}, {}, o), Error);
  o = {};
  o.pairs = {parse_compare_pair("impl=a:b"), parse_compare_pair("impl=c:d")};
  EXPECT_THROW(cmp({}, {}, o), Error);
}

TEST(Compare, FoldersAndTheSettingsThatDiffer) {
  // run-a has a run.json (context with NCCL_ALGO, commit, host); run-b only its CSV's '#' lines.
  const ResultSet a = read_result_set(kData + "/compare/run-a");
  const ResultSet b = read_result_set(kData + "/compare/run-b");
  EXPECT_EQ(a.csv_path, kData + "/compare/run-a/results.csv");
  ASSERT_EQ(a.rows.size(), 2u);
  EXPECT_EQ(b.context.value("command_line", ""), "ccbench --device cpu -b 8 -e 1M");
  const ResultSet c = read_result_set(kData + "/compare/run-c");
  const CompareResult r = compare_runs(a.rows, c.rows, {}, a.context, c.context);
  EXPECT_NE(r.text.find("# settings that differ:\n#   environment.NCCL_ALGO: Ring -> Tree\n#   git_hash: "
                        "1111aaaa -> 2222bbbb\n#   hosts: node01 -> node02\n"),
            std::string::npos)
      << r.text;
  try {
    read_result_set(kData + "/compare");
    ADD_FAILURE() << "a folder without results.csv was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("folder without results.csv"), std::string::npos) << e.what();
  }
}

TEST(Compare, MarkdownAndJson) {
  auto before = sweep("ring"), after = before;
  after.back().status = RowStatus::wrong;
  CompareOptions o;
  o.format = "md";
  const std::string md = cmp(before, after, o).text;
  EXPECT_NE(md.find("| case | size | figure | before | after | ratio | noise | verdict |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 128 MiB | busbw | 9.99 GB/s | wrong | - | - | **NOW wrong** |"), std::string::npos) << md;
  o.format = "json";
  const Json j = Json::parse(cmp(before, after, o).text);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["failures"], 1);
  EXPECT_EQ(j["matched"], 9);
  EXPECT_EQ(j["rows"].size(), 9u);
  EXPECT_EQ(j["rows"][8]["verdict"], "NOW wrong");
  EXPECT_EQ(j["rows"][8]["after"]["status"], "wrong");
  EXPECT_EQ(j["rows"][0]["figure"], "time_median_us");
}

}  // namespace
}  // namespace ccbench
