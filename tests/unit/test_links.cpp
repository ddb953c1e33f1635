// The reports of `ccbench links` (harness/links/links.h): outliers, the matrix, CSV and JSON, ceilings.
#include <filesystem>

#include <gtest/gtest.h>

#include "harness/links/links.h"
#include "results/accept.h"
#include "results/links.h"
#include "results/csv_reader.h"
#include "core/error.h"
#include "core/text_file.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

LinkResult pair(int s, int d, double oneway, double bidir, std::uint64_t bytes = 1 << 20) {
  LinkResult r;
  r.transport = "shm";
  r.mode = "pair";
  r.src = s;
  r.dst = d;
  r.src_host = s < 2 ? "a" : "b";
  r.dst_host = d < 2 ? "a" : "b";
  r.bytes = bytes;
  r.oneway_gbps = oneway;
  r.bidir_gbps = bidir;
  return r;
}

std::vector<LinkResult> three_ranks() {
  return {pair(0, 1, 10, 20),  pair(0, 2, 10, 20), pair(1, 0, 10, 20),
          pair(1, 2, 8.5, 20), pair(2, 0, 10, 12), pair(2, 1, 10, 20)};
}

TEST(LinksReport, OutliersBelowThresholdOfTheMedianAreNamed) {
  const auto results = three_ranks();
  const auto out = find_link_outliers(results, 0.9);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].result->src, 1);
  EXPECT_EQ(out[0].result->dst, 2);
  EXPECT_EQ(out[0].metric, "one-way");
  EXPECT_DOUBLE_EQ(out[0].median, 10);
  EXPECT_EQ(out[1].result->src, 2);
  EXPECT_EQ(out[1].metric, "bidirectional");
  EXPECT_TRUE(find_link_outliers(results, 0.5).empty());
}

TEST(LinksReport, EmptyCellsAreNotZeroAndNotCompared) {
  auto results = three_ranks();
  results[3].oneway_gbps.reset();
  results[3].bidir_gbps.reset();
  results[3].reason = "no peer access";
  const auto out = find_link_outliers(results, 0.9);
  ASSERT_EQ(out.size(), 1u);  // only the bidirectional 12 of 2 -> 0
  const std::string m = format_link_matrix(results, "shm", 1 << 20, LinkMetric::oneway, 3);
  EXPECT_EQ(m,
            " src\\dst        0        1        2\n"
            "       0        -    10.00    10.00\n"
            "       1    10.00        -         \n"
            "       2    10.00    10.00        -\n");
  const std::string csv = links_to_csv(results);
  const CsvTable t = parse_csv(csv);
  ASSERT_EQ(t.rows.size(), 6u);
  EXPECT_EQ(t.header[2], "link");
  EXPECT_EQ(t.rows[3][2], "a:1-b:2");
  EXPECT_EQ(t.header[8], "oneway_GBps");
  EXPECT_EQ(t.rows[3][8], "");  // empty, not 0
  EXPECT_EQ(t.rows[3][11], "no peer access");
  EXPECT_EQ(t.rows[0][8], "10");
  EXPECT_EQ(parse_csv(links_to_csv({pair(0, 1, 1.25e-5, 2)})).rows[0][8], "1.25e-05");
}

TEST(LinkName, OneNameWhicheverWayAndWhicheverCommand) {
  EXPECT_EQ(link_name(0, "n1", 3, "n2"), "n1:0-n2:3");
  EXPECT_EQ(link_name(3, "n2", 0, "n1"), "n1:0-n2:3");  // both directions are one link
  EXPECT_EQ(link_name(2, "n1", -1, "n1"), "n1:2-host");
  EXPECT_EQ(link_name(-1, "n1", 2, "n1"), "n1:2-host");
}

// A links.csv read as rows accept judges: one verdict per link over both of its directions,
// unmeasured cells skipped rather than zero, damaged numbers refused with file and line.
TEST(LinksAccept, LinksCsvGivesOneVerdictPerLink) {
  auto results = three_ranks();
  results[3].oneway_gbps.reset();  // 1 -> 2 not measured
  results[3].reason = "no peer access";
  const std::string dir = ::testing::TempDir() + "links-accept";
  std::filesystem::create_directories(dir);
  write_text_file(dir + "/links.csv", links_to_csv(results));
  const ResultSet set = read_results_or_links(dir);
  ASSERT_EQ(set.rows.size(), 6u);
  EXPECT_EQ(set.rows[0].collective, "link");
  EXPECT_EQ(set.rows[0].impl, "links");
  EXPECT_EQ(set.rows[0].link, "a:0-a:1");
  EXPECT_EQ(set.rows[2].link, "a:0-a:1");  // 1 -> 0: the same link
  EXPECT_DOUBLE_EQ(set.rows[0].busbw_gbps, 10);
  EXPECT_EQ(set.rows[3].status, RowStatus::skipped);
  EXPECT_EQ(set.rows[3].reason, "no peer access");

  // Every measured one-way figure is 10 GB/s: a floor of 9.5 passes every link, 10.5 fails each.
  const auto rules = parse_rules(
      "rules:\n  - name: links\n    select: {collective: link, mode: pair}\n"
      "    require: {min_busbw: 9.5}\n",
      "r.yaml");
  AcceptReport rep = evaluate_rules(rules, {set});
  EXPECT_TRUE(rep.passed);
  ASSERT_EQ(rep.links.size(), 3u);
  for (const PlaceVerdict& p : rep.links) EXPECT_EQ(p.state, CheckState::pass) << p.name << " " << p.note;
  EXPECT_EQ(rep.links[0].name, "a:0-a:1");
  EXPECT_EQ(rep.links[0].rows, 2);
  EXPECT_EQ(rep.links[2].name, "a:1-b:2");
  EXPECT_EQ(rep.links[2].rows, 2);  // 2 -> 1 measured, 1 -> 2 skipped

  // A link none of whose rows was measured has no verdict (N/A with the reason), never PASS.
  std::vector<LinkResult> unmeasured = three_ranks();
  for (int i : {3, 5}) {  // 1 -> 2 and 2 -> 1
    unmeasured[static_cast<size_t>(i)].oneway_gbps.reset();
    unmeasured[static_cast<size_t>(i)].reason = "no peer access";
  }
  write_text_file(dir + "/links.csv", links_to_csv(unmeasured));
  rep = evaluate_rules(rules, {read_results_or_links(dir + "/links.csv")});
  ASSERT_EQ(rep.links.size(), 3u);
  EXPECT_EQ(rep.links[2].state, CheckState::not_available);
  EXPECT_EQ(rep.links[2].note, "every one of its 2 rows was skipped (no peer access)");
  EXPECT_EQ(rep.links[0].state, CheckState::pass);

  const auto strict = parse_rules(
      "rules:\n  - name: links\n    select: {collective: link}\n"
      "    require: {min_busbw: 10.5}\n",
      "r.yaml");
  rep = evaluate_rules(strict, {set});
  EXPECT_FALSE(rep.passed);
  for (const PlaceVerdict& p : rep.links) EXPECT_EQ(p.state, CheckState::fail) << p.name;

  write_text_file(dir + "/links.csv",
                  "transport,mode,link,src,dst,src_host,dst_host,bytes,oneway_GBps,"
                  "bidir_GBps,latency_us,reason\nshm,pair,a:0-a:1,0,1,a,a,8,nan,1,,\n");
  try {
    read_results_or_links(dir + "/links.csv");
    ADD_FAILURE() << "a NaN bandwidth was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("links.csv:2: oneway_GBps 'nan' is not a number >= 0"), std::string::npos)
        << e.what();
  }
}

TEST(LinksReport, JsonCarriesResultsOutliersAndCeilings) {
  const auto results = three_ranks();
  const auto outliers = find_link_outliers(results, 0.9);
  const auto j = links_to_json(results, outliers, {{"ranks", 3}});
  EXPECT_EQ(j["schema"], "ccbench-links/1");
  ASSERT_EQ(j["results"].size(), 6u);
  EXPECT_EQ(j["results"][3]["oneway_GBps"], 8.5);
  EXPECT_TRUE(j["results"][0]["latency_us"].is_null());
  ASSERT_EQ(j["outliers"].size(), 2u);
  EXPECT_EQ(j["outliers"][0]["src_host"], "a");
  EXPECT_EQ(j["outliers"][0]["dst_host"], "b");
  const auto c = ceilings_from_links(j, "test");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].transport, "shm");
  EXPECT_DOUBLE_EQ(c[0].oneway_gbps, 10);
  EXPECT_DOUBLE_EQ(c[0].bidir_gbps, 20);
  try {
    ceilings_from_links(nlohmann::ordered_json{{"schema", "other"}}, "x.json");
    ADD_FAILURE() << "accepted a foreign file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("x.json is not a links.json"), std::string::npos) << e.what();
  }
}

TEST(LinksEfficiency, BusbwOverHalfTheBidirectionalCeilingOfThePath) {
  const std::vector<LinkCeiling> c = {{"shm", 10, 20}, {"mpi", 4, 6}, {"ce", 397, 784}, {"pcie", 55, 102}};
  EXPECT_DOUBLE_EQ(*row_efficiency("shm", "cpu", 8, c), 0.8);         // 8 / (20 / 2)
  EXPECT_DOUBLE_EQ(*row_efficiency("shm+mpi", "cpu", 1.5, c), 0.5);   // the slower part: 6 / 2
  EXPECT_DOUBLE_EQ(*row_efficiency("nccl", "gpu", 392, c), 1.0);      // peer memory: copy engines
  EXPECT_DOUBLE_EQ(*row_efficiency("p2p", "gpu", 196, c), 0.5);       // our kernels over peer memory
  EXPECT_DOUBLE_EQ(*row_efficiency("cuda_ipc", "gpu", 196, c), 0.5);  // p2p's earlier name, in old files
  EXPECT_DOUBLE_EQ(*row_efficiency("host", "gpu", 25.5, c), 0.5);     // host staging: pinned copies
  EXPECT_FALSE(row_efficiency("tcp", "cpu", 1, c));                   // not measured: no value, not 0
  EXPECT_FALSE(row_efficiency("shm+tcp", "cpu", 1, c));
  EXPECT_FALSE(row_efficiency("nccl", "cpu", 1, c));  // CPU rows never map to ce
}

TEST(LinksEfficiency, AMeasuredRowGetsItsPathsCeilingAndEfficiencyOthersNeither) {
  const std::vector<LinkCeiling> c = {{"shm", 10, 20}};
  RunRecord r = RecordBuilder().busbw(8);
  set_ceiling_columns(r, c);
  EXPECT_DOUBLE_EQ(*r.link_ceiling_gbps, 10);  // per direction with both busy: 20 / 2
  EXPECT_DOUBLE_EQ(*r.efficiency, 0.8);
  RunRecord wrong = r;
  wrong.status = RowStatus::wrong;  // measured, but its figure is not trusted
  set_ceiling_columns(wrong, c);
  EXPECT_FALSE(wrong.link_ceiling_gbps || wrong.efficiency);
  RunRecord tcp = r;
  tcp.transport = "tcp";  // no ceiling measured for its path: empty, not 0
  set_ceiling_columns(tcp, c);
  EXPECT_FALSE(tcp.link_ceiling_gbps || tcp.efficiency);
  const auto context = link_ceilings_context(c, "links.json");
  EXPECT_EQ(context["source"], "links.json");
  EXPECT_EQ(context["ceilings"][0]["bidir_GBps"], 20);
}

TEST(LinksEfficiency, CeilingsAreTheMedianAtTheLargestSize) {
  std::vector<LinkResult> r = {pair(0, 1, 1, 2, 1024), pair(0, 1, 9, 18), pair(1, 0, 7, 14), pair(0, 2, 8, 16)};
  const auto c = ceilings_from_links(links_to_json(r, {}, {}), "test");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_DOUBLE_EQ(c[0].oneway_gbps, 8);  // median of 9, 7, 8; the 1 KiB row does not count
  EXPECT_DOUBLE_EQ(c[0].bidir_gbps, 16);
}

TEST(LinksEfficiency, HostStagingTakesEveryGpuCopyingAtOnceWhereMeasured) {
  auto pcie = [](int gpu, const char* mode, double bidir) {
    LinkResult r;
    r.transport = "pcie";
    r.mode = mode;
    r.src = gpu;
    r.bytes = 256 << 20;
    r.bidir_gbps = bidir;
    return r;
  };
  std::vector<LinkResult> r = {pcie(0, "d2h+h2d", 101), pcie(1, "d2h+h2d", 101)};
  EXPECT_DOUBLE_EQ(ceilings_from_links(links_to_json(r, {}, {}), "one at a time")[0].bidir_gbps, 101);
  r.push_back(pcie(0, kPcieAllAtOnce, 74));
  r.push_back(pcie(1, kPcieAllAtOnce, 72));
  const auto c = ceilings_from_links(links_to_json(r, {}, {}), "all at once");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_DOUBLE_EQ(c[0].bidir_gbps, 73);  // the median of the concurrent rows only
  EXPECT_DOUBLE_EQ(*row_efficiency("host", "gpu", 36.5, c), 1.0);
}

}  // namespace
}  // namespace ccbench
