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
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

const std::string kData = CCBENCH_TEST_DATA_DIR;
const std::string kFixtures = CCBENCH_SOURCE_DIR "/tests/fixtures";

// A CPU row: time `us` at `bytes`, spread `cv` (p95 as far above the median).
RunRecord timed_row(const std::string& impl, std::uint64_t bytes, double us, double cv = 0.01) {
  const double busbw = bytes / (us * 1e3);  // allreduce on 2 ranks: factor 1
  return RecordBuilder()
      .impl(impl)
      .float_bytes(bytes)
      .ranks(2, 2, 1)
      .times_us(us, us, us, us * (1 + cv), us * (1 + cv))
      .cv(cv)
      .iterations(20)
      .busbw(busbw, busbw);
}

// A sweep of one impl from 8 B to 128 MiB (9 sizes): a 10 us fixed cost, then 10 GB/s.
std::vector<RunRecord> sweep(const std::string& impl, double cv = 0.01) {
  std::vector<RunRecord> rows;
  for (std::uint64_t b = 8; b <= (128u << 20); b *= 8) rows.push_back(timed_row(impl, b, 10 + b / 1e4, cv));
  return rows;
}

ResultSet set_of(const std::vector<RunRecord>& rows, const std::string& name = "run.csv") {
  ResultSet s;
  s.csv_path = name;
  s.rows = rows;
  return s;
}

CompareResult cmp(const std::vector<RunRecord>& before, const std::vector<RunRecord>& after,
                  CompareOptions o = {}) {
  return compare_runs(set_of(before, "before.csv"), set_of(after, "after.csv"), o);
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
  const CompareResult c = compare_runs(a, b, {});
  EXPECT_EQ(c.failures, 0) << c.text;
  EXPECT_EQ(c.matched, 132);
  EXPECT_NE(c.text.find("OK: 0 failures in 132 matched rows"), std::string::npos) << c.text;
}

TEST(Compare, ThreeRunsOfOneCommandOnAnOversubscribedMachineNeverFail) {
  // One command three times, 4 ranks on 2 loaded cores, with run.json (evidence
  // cpu2core-20261201-compare): every ordered pair is OK, the whole run's shift and the rows
  // slower beyond the noise shown, not counted. The old rule failed all six pairs.
  std::vector<ResultSet> runs;
  for (const char* r : {"run1", "run2", "run3"})
    runs.push_back(read_result_set(kFixtures + "/cpu2core-20261201-compare/" + r));
  for (size_t i = 0; i < runs.size(); ++i)
    for (size_t j = 0; j < runs.size(); ++j) {
      if (i == j) continue;
      const CompareResult c = compare_runs(runs[i], runs[j], {});
      EXPECT_EQ(c.failures, 0) << i << " -> " << j << "\n" << c.text;
      EXPECT_EQ(c.matched, 216);
      EXPECT_NE(c.text.find("# oversubscribed (4 ranks on 2 hardware threads)"), std::string::npos) << c.text;
    }
  // Read as on a dedicated machine (no context), run1 -> run2 fails on 7 all-gather/tree rows each
  // 4 ms a call (the scheduler's tick) in run 2; the whole run 1.13x slower is inside the rows'
  // scatter (99 %) and no failure (kShiftScatterSigmas): the tolerance alone counted it.
  ResultSet before = runs[0], after = runs[1];
  before.context = after.context = Json::object();
  const CompareResult c = compare_runs(before, after, {});
  EXPECT_EQ(c.failures, 7) << c.text;
  EXPECT_NE(c.text.find("The whole run is 1.13x slower: every row alike, so the machine (or what every row shares), "
                        "not a row; not a failure: inside the rows' scatter (99%)"),
            std::string::npos) << c.text;
}

TEST(Compare, ASlowdownBeyondTheNoiseIsFlaggedAndNamesItsCase) {
  auto before = sweep("ring"), after = before;
  for (size_t i = after.size() - 2; i < after.size(); ++i)  // the two largest sizes at half the busbw
    after[i] = timed_row("ring", after[i].bytes, after[i].time_median_us * 2);
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
  after[6] = timed_row("ring", after[6].bytes, after[6].time_median_us * 2);  // 2 MiB only, its neighbours unchanged
  const CompareResult c = cmp(before, after);
  EXPECT_EQ(c.failures, 0) << c.text;
  EXPECT_NE(c.text.find("    2 MiB   busbw  9.54 GB/s  4.77 GB/s  0.50x     5%  slower (beyond 5%, but at this size only)\n"),
            std::string::npos) << c.text;
  CompareOptions strict;
  strict.count_isolated = true;
  EXPECT_EQ(cmp(before, after, strict).failures, 1);
  // A case measured at one size has no neighbour to tell: its slowdown counts.
  EXPECT_EQ(cmp({before[6]}, {after[6]}).failures, 1);
  // A case of one size measured in both placements: the other placement is its neighbour.
  RunRecord in_before = before[6], in_after = after[6];
  in_before.in_place = in_after.in_place = true;
  EXPECT_EQ(cmp({before[6], in_before}, {after[6], in_before}).failures, 0);
  EXPECT_EQ(cmp({before[6], in_before}, {after[6], in_after}).failures, 2);
}

// A row whose fastest iteration is `low` below its median (its own spread).
RunRecord spread_row(std::uint64_t bytes, double us, double low) {
  RunRecord r = timed_row("ring", bytes, us);
  r.time_min_us = us * (1 - low);
  return r;
}

TEST(Compare, ASlowdownInsideBothRowsSpreadIsNotFlagged) {
  // Two sizes of nine 30% slower, each row's median 20% above its fastest iteration: inside
  // log(1/0.8) + log(1/0.8) = 45%. At 60% slower they are beyond.
  std::vector<RunRecord> before, after;
  for (const RunRecord& r : sweep("ring")) before.push_back(spread_row(r.bytes, r.time_median_us, 0.2));
  after = before;
  for (size_t i = 7; i < 9; ++i) after[i] = spread_row(before[i].bytes, before[i].time_median_us * 1.3, 0.2);
  EXPECT_EQ(cmp(before, after).failures, 0) << cmp(before, after).text;
  for (size_t i = 7; i < 9; ++i) after[i] = spread_row(before[i].bytes, before[i].time_median_us * 1.6, 0.2);
  EXPECT_EQ(cmp(before, after).failures, 2) << cmp(before, after).text;
}

TEST(Compare, OneSlowOutlierOfFiveIterationsCannotHideATenfoldDrop) {
  // -n 5: one iteration of the baseline 10x slower than the others sets its p95 (and max) at
  // 10x the median, and its cv near 2; the median and the fastest iteration do not move, so the
  // noise stays the tolerance and a 10x drop at two sizes is flagged.
  auto before = sweep("ring"), after = before;
  for (RunRecord& r : before) {
    r.iterations = 5;
    r.time_p95_us = r.time_max_us = 10 * r.time_median_us;
    r.time_cv = 1.9;
  }
  for (size_t i = 4; i < 6; ++i) {
    after[i] = timed_row("ring", before[i].bytes, before[i].time_median_us * 10);
    after[i].iterations = 5;
  }
  const CompareResult c = cmp(before, after);
  EXPECT_EQ(c.failures, 2) << c.text;
  EXPECT_EQ(count_lines_with(c.text, "SLOWER (beyond 5% noise/tolerance)"), 4) << c.text;  // the table and the list
}

TEST(Compare, TooFewIterationsAreNotedAndTheirSpreadIgnored) {
  auto before = sweep("ring"), after = before;
  for (RunRecord& r : before) {
    r.iterations = 3;
    r.time_min_us = r.time_median_us / 4;  // three samples: no spread to speak of
  }
  for (size_t i = 4; i < 6; ++i) after[i] = timed_row("ring", before[i].bytes, before[i].time_median_us * 2);
  const CompareResult c = cmp(before, after);
  EXPECT_EQ(c.failures, 2) << c.text;
  EXPECT_NE(c.text.find("  0.50x    5%*  SLOWER"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("* = from too few iterations"), std::string::npos) << c.text;
}

TEST(Compare, AWholeRunShiftIsToldApartFromRowRegressions) {
  auto before = sweep("ring"), after = before;
  for (RunRecord& r : after) r = timed_row("ring", r.bytes, r.time_median_us / 0.52);
  const CompareResult c = cmp(before, after);
  EXPECT_EQ(c.failures, 1) << c.text;  // one: the run, not nine rows
  EXPECT_NE(c.text.find("The whole run is 1.92x slower: every row alike, so the machine (or what every row shares), "
                        "not a row; a failure"),
            std::string::npos) << c.text;
  EXPECT_NE(c.text.find("# SLOWER: the whole run, 1.92x the time of every row (the machine, not a row)"),
            std::string::npos) << c.text;
  EXPECT_EQ(count_lines_with(c.text, "SLOWER (beyond"), 0) << c.text;
  // A row slower beyond the shift is still a row regression.
  after[8] = timed_row("ring", before[8].bytes, before[8].time_median_us / 0.52 * 2);
  after[7] = timed_row("ring", before[7].bytes, before[7].time_median_us / 0.52 * 2);
  EXPECT_EQ(cmp(before, after).failures, 3) << cmp(before, after).text;
}

TEST(Compare, AnOversubscribedRunsSlowdownsAreShownNotCounted) {
  auto before = sweep("ring"), after = before;
  for (RunRecord& r : after) r = timed_row("ring", r.bytes, r.time_median_us * 1.5);
  ResultSet b = set_of(before), a = set_of(after);
  const Json node = {{"node", {{"cpu", {{"hardware_threads", 2}}}}}};
  for (ResultSet* s : {&b, &a})
    s->context = {{"device", "cpu"}, {"ranks_per_node", 4}, {"nodes_detail", Json::array({node})}};
  // Two adjacent sizes 2x slower beyond the shift: shown, not counted either.
  for (size_t i : {7u, 8u}) after[i] = timed_row("ring", before[i].bytes, before[i].time_median_us * 3);
  a = set_of(after);
  for (ResultSet* s : {&b, &a})
    s->context = {{"device", "cpu"}, {"ranks_per_node", 4}, {"nodes_detail", Json::array({node})}};
  const CompareResult c = compare_runs(b, a, {});
  EXPECT_EQ(c.failures, 0) << c.text;
  EXPECT_NE(c.text.find("The whole run is 1.50x slower: every row alike, so the machine (or what every row shares), not "
                        "a row; not a failure: 4 ranks on 2 hardware threads, where figures follow the scheduler"),
            std::string::npos) << c.text;
  EXPECT_EQ(count_lines_with(c.text, "but oversubscribed: not counted"), 2) << c.text;
  EXPECT_NE(c.text.find("# oversubscribed (4 ranks on 2 hardware threads): the times follow the scheduler"),
            std::string::npos) << c.text;
  // Wrong rows still count.
  a.rows[0].status = RowStatus::wrong;
  EXPECT_EQ(compare_runs(b, a, {}).failures, 1);
}

TEST(Compare, OneNoisyRowCannotBlowUpTheScatter) {
  // Eighteen rows (nine sizes, both placements): one 30x slower with its iterations spread
  // (disturbed), two adjacent sizes 2x slower and tight, the rest unchanged. The scatter is the
  // rows' median deviation, which the 30x row does not widen: the 2x sizes count (each the
  // other's slower neighbour), the disturbed row is reported and not counted.
  std::vector<RunRecord> before = sweep("ring");
  for (size_t i = 0; i < 9; ++i) {
    before.push_back(before[i]);
    before.back().in_place = true;
  }
  std::vector<RunRecord> after = before;
  after[3] = spread_row(before[3].bytes, before[3].time_median_us * 30, 0.9);
  for (size_t i : {6u, 7u}) after[i] = timed_row("ring", before[i].bytes, before[i].time_median_us * 2);
  const CompareResult c = cmp(before, after);
  EXPECT_EQ(c.failures, 2) << c.text;
  EXPECT_NE(c.text.find("slower (beyond 900%), but disturbed: its iterations spread over 10.0x; run again"),
            std::string::npos) << c.text;
  EXPECT_EQ(count_lines_with(c.text, "# SLOWER (beyond 5% noise/tolerance): allreduce  impl ring"), 2) << c.text;
}

// A slower link slows every bandwidth-bound size together: on a cluster in a box 14 of 40 rows 12x
// slower made the pair's scatter (a median deviation of the rows) 102 %, and 4 of it let every one
// pass. Here 16 of 40 rows 6-11x slower, the others moving up to 1.4x as a busy machine's do: the
// scatter alone would allow over 20x; the allowance stops at kScatterAllowanceCap (3x), and each
// slow row counts.
TEST(Compare, ManyRowsSlowerTogetherCannotHideInTheScatterTheyMake) {
  const double jitter[] = {0.8, 1.25, 1.0, 0.7, 1.3, 1.1, 0.9, 1.4, 0.75, 1.2};
  std::vector<RunRecord> before, after;
  for (const char* impl : {"ring", "tree", "mpi", "direct"}) {
    int i = 0;
    for (std::uint64_t b = 8; b <= (8u << 18); b *= 4, ++i) {  // 10 sizes, 8 B to 2 MiB
      before.push_back(timed_row(impl, b, 10 + b / 1e4));
      const double slower = b >= (8u << 12) ? 8.0 : 1.0;  // 32 KiB and up: the 4 largest
      after.push_back(timed_row(impl, b, (10 + b / 1e4) * slower * jitter[i]));
    }
  }
  const CompareResult c = cmp(before, after);
  EXPECT_EQ(c.failures, 16) << c.text;
  EXPECT_EQ(count_lines_with(c.text, "# SLOWER (beyond 200% noise/tolerance)"), 16) << c.text;
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
  RunRecord b = timed_row("ring", 8, 10), a = timed_row("ring", 8, 10.2);
  b.busbw_gbps = b.busbw_median_gbps = a.busbw_gbps = a.busbw_median_gbps = 0;  // as printed: 0.00
  const CompareResult c = cmp({b}, {a});
  EXPECT_EQ(c.failures, 0) << c.text;
  EXPECT_NE(c.text.find("8 B    time"), std::string::npos) << c.text;
}

TEST(Compare, AnAbortedRunWithFewRowsFailsAndTheMissingRowsAreSummarised) {
  const ResultSet full = read_result_set(kFixtures + "/cpu2core-20261130-np4-np8/np4-run1-results.csv");
  const std::vector<RunRecord> aborted(full.rows.begin(), full.rows.begin() + 5);
  const CompareResult c = cmp(full.rows, aborted);
  EXPECT_EQ(c.failures, 127) << c.text;
  // One line per case, in the table's list and in the failures: 12 cases, 11 sizes each.
  EXPECT_EQ(count_lines_with(c.text, "MISSING now: allgather  impl tree  transport shm"), 4) << c.text;
  EXPECT_NE(c.text.find("#   MISSING now: allgather  impl tree  transport shm  device cpu  ranks 4 (4 per node)  dtype "
                        "float  op none  mode eager  in-place  11 sizes, 4 KiB - 4 MiB\n"),
            std::string::npos) << c.text;
  EXPECT_LT(count_lines_with(c.text, "MISSING now"), 30) << c.text;
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
  EXPECT_EQ(c.failures, 1) << c.text;  // one: nothing matched (the rows are not missing one by one)
  // The hint comes first, right under the title, and no row is listed as missing.
  const std::string hint = "FAILED: no row matched; transport is tcp before and shm after (--pair transport=tcp:shm "
                           "compares them)";
  EXPECT_EQ(c.text.find(hint), c.text.find('\n') + 3) << c.text;
  EXPECT_NE(c.text.find("# 9 rows before, 9 after: none with the same case and size in both"), std::string::npos)
      << c.text;
  EXPECT_EQ(count_lines_with(c.text, "MISSING"), 0) << c.text;
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
    r = timed_row("mpi", r.bytes, r.time_median_us * 3);  // MPI three times slower than ring
    one_run.push_back(r);
  }
  o.pairs = {parse_compare_pair("impl=ring:mpi")};
  const CompareResult within = cmp(one_run, one_run, o);
  EXPECT_EQ(within.matched, 9);
  EXPECT_EQ(within.failures, 1) << within.text;  // every size alike: the shift, one failure
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
  const CompareResult r = compare_runs(a, c, {});
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

// The nodes' settings that change rows with no option saying so are settings too: the CPU
// reductions' vector set and the kernel's TCP buffer defaults, the nodes' distinct values joined.
TEST(Compare, NodeSettingsAreSettings) {
  auto node = [](const char* set, long long rmem_default) {
    return Json{{"host", "h"},
                {"node",
                 {{"cpu", {{"reduce_vector_set", set}}},
                  {"tcp", {{"tcp_rmem", {4096, rmem_default, 6291456}}, {"tcp_wmem", {4096, 16384, 4194304}}}}}}};
  };
  const Json c = {{"nodes_detail", Json::array({node("AVX-512 VBMI", 131072), node("AVX-512 BW", 4194304)})}};
  std::map<std::string, std::string> got;
  for (const auto& [k, v] : context_settings(c)) got[k] = v;
  EXPECT_EQ(got["node.cpu.reduce_vector_set"], "AVX-512 BW,AVX-512 VBMI");
  EXPECT_EQ(got["node.tcp.tcp_rmem"], "4096 131072 6291456,4096 4194304 6291456");
  EXPECT_EQ(got["node.tcp.tcp_wmem"], "4096 16384 4194304");
  // A context from before these parts: no entry, so the other run's values read "(unset)".
  const auto old = context_settings(Json{{"nodes_detail", Json::array({Json{{"host", "h"}, {"node", Json::object()}}})}});
  for (const auto& [k, v] : old) EXPECT_EQ(k.rfind("node.", 0), std::string::npos) << k << " = " << v;
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

// The rows of `rows` once per cycle, 1 to n, as `-N n` writes them (every row of a sweep, then again).
std::vector<RunRecord> cycles(const std::vector<RunRecord>& rows, int n) {
  std::vector<RunRecord> out;
  for (int c = 1; c <= n; ++c)
    for (RunRecord r : rows) {
      r.cycle = c;
      out.push_back(r);
    }
  return out;
}

TEST(Compare, RepeatedKeysMatchCycleByCycleAndAWrongRowInTheSecondCycleFails) {
  const auto two = cycles(sweep("ring"), 2);
  const CompareResult same = cmp(two, two);
  EXPECT_EQ(same.failures, 0) << same.text;
  EXPECT_EQ(same.matched, 18) << same.text;
  EXPECT_EQ(count_lines_with(same.text, "MISSING"), 0) << same.text;
  auto faulted = two;
  faulted[9 + 3].status = RowStatus::wrong;  // cycle 2, the fourth size
  const CompareResult c = cmp(two, faulted);
  EXPECT_EQ(c.failures, 1) << c.text;
  EXPECT_NE(c.text.find("# NOW wrong: allreduce  impl ring  transport shm  device cpu  ranks 2 (2 per node)  dtype float  "
                        "op sum  mode eager  out-of-place  size 4 KiB  cycle 2"),
            std::string::npos)
      << c.text;
  // A run of one cycle against one of two: the second cycle has no counterpart, and its wrong row
  // still fails.
  const CompareResult one = cmp(sweep("ring"), faulted);
  EXPECT_EQ(one.failures, 1) << one.text;
  EXPECT_NE(one.text.find("# ONLY AFTER, wrong: allreduce  impl ring"), std::string::npos) << one.text;
}

TEST(Compare, AWholeRunShiftInsideTheRowsScatterIsNotAFailure) {
  // Rows scattering ~25 % between two runs of one command, the run as a whole 1.07x slower: what
  // a busy machine does (the false "SLOWER: the whole run" of a fixed 5 % tolerance).
  const double scatter[] = {1.0, 1.3, 0.77, 1.25, 0.8, 1.2, 0.83, 1.15, 0.87};
  auto before = sweep("ring"), after = before;
  for (size_t i = 0; i < after.size(); ++i) after[i] = timed_row("ring", after[i].bytes, after[i].time_median_us * 1.07 * scatter[i]);
  const CompareResult c = cmp(before, after);
  EXPECT_EQ(c.failures, 0) << c.text;
  EXPECT_NE(c.text.find("not a failure: inside the rows' scatter"), std::string::npos) << c.text;
  // Well beyond that scatter, the whole run is one failure.
  for (size_t i = 0; i < after.size(); ++i) after[i] = timed_row("ring", before[i].bytes, before[i].time_median_us * 1.6 * scatter[i]);
  const CompareResult slow = cmp(before, after);
  EXPECT_EQ(slow.failures, 1) << slow.text;
  EXPECT_NE(slow.text.find("# SLOWER: the whole run"), std::string::npos) << slow.text;
}

}  // namespace
}  // namespace ccbench
