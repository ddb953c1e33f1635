// Fleet acceptance that names the bad host: rounds of disjoint pairs (topologies/pair_rounds.h),
// attribution of slow links to the endpoint they share (results/attribution.h) and the bisection
// of the whole job (results/bisection.h).
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/model/acceptance_plan.h"
#include "results/accept.h"
#include "results/attribution.h"
#include "results/bisection.h"
#include "results/links.h"
#include "results/stragglers.h"
#include "topologies/pair_rounds.h"
#include "topologies/system.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

// ------------------------------------------------------------------------------ the schedule

// Every pair of 0..n-1 exactly once, and no rank (resp. node) twice in one round.
void expect_all_pairs_once(const std::vector<PairRound>& rounds, const std::vector<int>& node_of) {
  const int n = static_cast<int>(node_of.size());
  std::map<RankPair, int> seen;
  for (const PairRound& round : rounds) {
    std::set<int> nodes_in_round;
    for (const auto& [a, b] : round) {
      ASSERT_LT(a, b);
      ASSERT_LT(b, n);
      ++seen[{a, b}];
      const int na = node_of[static_cast<size_t>(a)], nb = node_of[static_cast<size_t>(b)];
      EXPECT_TRUE(nodes_in_round.insert(na).second) << "node " << na << " twice in a round";
      if (nb != na) {
        EXPECT_TRUE(nodes_in_round.insert(nb).second) << "node " << nb << " twice in a round";
      }
    }
  }
  EXPECT_EQ(static_cast<int>(seen.size()), n * (n - 1) / 2);
  for (const auto& [pair, count] : seen) EXPECT_EQ(count, 1) << pair.first << "-" << pair.second;
}

std::vector<int> one_rank_per_node(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

TEST(PairRounds, RoundRobinMeetsEveryPairOnceInNMinus1RoundsOfDisjointPairs) {
  for (int n = 2; n <= 65; ++n) {
    const auto rounds = round_robin(n);
    SCOPED_TRACE(n);
    EXPECT_EQ(static_cast<long long>(rounds.size()), pair_round_count(n, false));
    EXPECT_EQ(static_cast<int>(rounds.size()), n % 2 ? n : n - 1);
    for (const PairRound& r : rounds) EXPECT_EQ(static_cast<int>(r.size()), n / 2);  // odd n: one bye
    expect_all_pairs_once(rounds, one_rank_per_node(n));
  }
  EXPECT_TRUE(round_robin(1).empty());
  EXPECT_EQ(round_robin(4), (std::vector<PairRound>{{{0, 3}, {1, 2}}, {{0, 2}, {1, 3}}, {{0, 1}, {2, 3}}}));
}

TEST(PairRounds, RankPairsKeepNodesDisjointAndSerialIsOneAtATime) {
  EXPECT_EQ(pair_rounds(one_rank_per_node(6), false), round_robin(6));
  // 3 nodes of 2 ranks, 4 nodes of uneven sizes.
  const std::vector<std::vector<int>> layouts = {{0, 0, 1, 1, 2, 2}, {0, 0, 0, 1, 2, 2, 3}, {0, 0, 0, 0}};
  for (const auto& node_of : layouts) {
    SCOPED_TRACE(testing::PrintToString(node_of));
    expect_all_pairs_once(pair_rounds(node_of, false), node_of);
  }
  // 3 nodes of 2: 3 node rounds x 4 rank pairs, then the pairs within the nodes together.
  const auto r = pair_rounds({0, 0, 1, 1, 2, 2}, false);
  EXPECT_EQ(r.size(), 13u);
  EXPECT_EQ(r.back(), (PairRound{{0, 1}, {2, 3}, {4, 5}}));
  const auto serial = pair_rounds({0, 1, 2, 3}, true);
  ASSERT_EQ(serial.size(), 6u);
  EXPECT_EQ(serial[1], (PairRound{{0, 2}}));
  EXPECT_EQ(pair_round_count(1024, false), 1023);
  EXPECT_EQ(pair_round_count(1024, true), 1024 * 1023 / 2);
  EXPECT_EQ(pair_round_count(5, false), 5);
}

// ----------------------------------------------------------------------------- attribution

TEST(Attribution, LinkNamesGiveHostsOrRanks) {
  EXPECT_EQ(link_endpoints("node-01:0-node-02:13"), (std::pair<std::string, std::string>{"node-01", "node-02"}));
  EXPECT_EQ(link_endpoints("vm:0-vm:2"), (std::pair<std::string, std::string>{"vm:0", "vm:2"}));
  EXPECT_FALSE(link_endpoints("vm:0-host"));
  EXPECT_FALSE(link_endpoints("(all)"));
  EXPECT_FALSE(link_endpoints("a-b"));
}

// Every link of `hosts` hosts (one rank each) at `healthy` GB/s, times `noise`, those touching
// a host of `slow` at `slow_rate`.
std::vector<LinkSample> fleet(int hosts, const std::set<int>& slow, double healthy, double slow_rate,
                              std::mt19937* rng = nullptr, double noise = 0) {
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::vector<LinkSample> out;
  for (int a = 0; a < hosts; ++a)
    for (int b = a + 1; b < hosts; ++b) {
      const std::string ha = fmt::format("h{}", a + 1), hb = fmt::format("h{}", b + 1);
      const double v = (slow.count(a) || slow.count(b) ? slow_rate : healthy) * (rng ? jitter(*rng) : 1.0);
      // Both directions, as links.csv has them: the link's figure is the lower.
      out.push_back({fmt::format("{}:{}-{}:{}", ha, a, hb, b), ha, hb, v, false});
      out.push_back({fmt::format("{}:{}-{}:{}", ha, a, hb, b), ha, hb, v * 1.05, false});
    }
  return out;
}

TEST(Attribution, OneSlowHostAmongFourIsNamedWithItsEvidence) {
  const Attribution a = attribute_by_value(fleet(4, {2}, 10, 0.95), 0.9);
  EXPECT_EQ(a.culprits(), std::vector<std::string>{"h3"});
  EXPECT_TRUE(a.suspects().empty());
  ASSERT_TRUE(a.reference);
  EXPECT_DOUBLE_EQ(*a.reference, 10);
  EXPECT_EQ(a.failed_links(), 3);
  EXPECT_EQ(a.blame_of("h1:0-h3:2"), "h3");
  EXPECT_EQ(a.blame_of("h1:0-h2:1"), "");
  EXPECT_EQ(attribution_text(a, "tcp one-way at 16 MiB", "# "),
            "# culprit (tcp one-way at 16 MiB): h3: all 3 of its links below 90% of 10 GB/s (0.95 to 0.95 GB/s, 10% "
            "to 10%), while 3 of the 3 links not involving it are not\n");
  EXPECT_EQ(a.endpoints.at(1).evidence, "2 of its 3 links pass; its failing links are put on h3");
  const auto j = attribution_json(a, "s");
  EXPECT_EQ(j["culprits"], nlohmann::ordered_json::array({"h3"}));
  EXPECT_EQ(j["endpoints"][0]["role"], "culprit");
}

// The case a median of all links gets wrong: 2 of the 3 links pass through the slow host.
TEST(Attribution, OneSlowHostAmongThreeIsNamedNotItsPartners) {
  for (int slow = 0; slow < 3; ++slow) {
    const Attribution a = attribute_by_value(fleet(3, {slow}, 10, 1), 0.9);
    EXPECT_EQ(a.culprits(), std::vector<std::string>{fmt::format("h{}", slow + 1)});
    EXPECT_EQ(a.failed_links(), 2);
  }
}

TEST(Attribution, ARandomSlowHostAmongNIsNamedThroughNoise) {
  std::mt19937 rng(33);
  for (int n = 3; n <= 36; n += (n < 8 ? 1 : 7)) {
    const int slow = std::uniform_int_distribution<int>(0, n - 1)(rng);
    SCOPED_TRACE(fmt::format("{} hosts, h{} slow", n, slow + 1));
    const Attribution a = attribute_by_value(fleet(n, {slow}, 10, 0.95, &rng, 0.04), 0.9);
    EXPECT_EQ(a.culprits(), std::vector<std::string>{fmt::format("h{}", slow + 1)});
    EXPECT_EQ(a.failed_links(), n - 1);
  }
}

TEST(Attribution, TwoSlowHostsAmongEightAreBothNamed) {
  const Attribution a = attribute_by_value(fleet(8, {1, 6}, 10, 1), 0.9);
  EXPECT_EQ(a.culprits(), (std::vector<std::string>{"h2", "h7"}));
  EXPECT_EQ(a.blame_of("h2:1-h7:6"), "h2+h7");
}

TEST(Attribution, ASlowLinkBetweenHealthyHostsIsTheLinksFault) {
  auto links = fleet(4, {}, 10, 10);
  for (LinkSample& s : links)
    if (s.link == "h1:0-h2:1") s.value = 2;
  const Attribution a = attribute_by_value(links, 0.9);
  EXPECT_TRUE(a.culprits().empty());
  EXPECT_EQ(a.blame_of("h1:0-h2:1"), "link");
  EXPECT_EQ(attribution_text(a, "s", ""),
            "link at fault (s): h1:0-h2:1: 2 GB/s, 20% of 10, while h1 and h2 are fine on their other links\n");
  // With 3 hosts too: each end passes with the third.
  auto three = fleet(3, {}, 10, 10);
  for (LinkSample& s : three)
    if (s.link == "h1:0-h2:1") s.value = 2;
  EXPECT_EQ(attribute_by_value(three, 0.9).blame_of("h1:0-h2:1"), "link");
}

TEST(Attribution, TwoHostsOrEveryLinkSlowIsSaidToBeAmbiguous) {
  const Attribution two = attribute_by_value(fleet(2, {1}, 10, 1), 0.9);
  EXPECT_TRUE(two.culprits().empty());
  EXPECT_EQ(attribution_text(two, "s", "# "),
            "# culprit (s): not judged: 2 endpoints: with fewer than 3 a link has no other link to be compared with (an "
            "absolute floor, `accept --rules`, can judge it)\n");
  std::vector<LinkSample> failing = {{"a:0-b:1", "a", "b", 0, true}};
  const Attribution v = attribute_by_verdict(failing);
  EXPECT_EQ(v.suspects(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(v.blame_of("a:0-b:1"), "ambiguous");
  EXPECT_NE(v.endpoints[0].evidence.find("with 2 endpoints a failing link cannot be pinned on one end"),
            std::string::npos);
  // Every link of 3 hosts failing: nothing proves any host fine.
  auto all = fleet(3, {}, 1, 1);
  for (LinkSample& s : all) s.failed = true;
  const Attribution none = attribute_by_verdict(all);
  EXPECT_EQ(none.suspects().size(), 3u);
  EXPECT_NE(none.endpoints[0].evidence.find("several of them are slow, or something they share is"), std::string::npos);
}

TEST(Attribution, ByVerdictAPassingLinkClearsBothEnds) {
  auto links = fleet(4, {}, 1, 1);
  for (LinkSample& s : links) s.failed = s.a == "h4" || s.b == "h4";
  const Attribution a = attribute_by_verdict(links);
  EXPECT_EQ(a.culprits(), std::vector<std::string>{"h4"});
  EXPECT_EQ(a.endpoints[0].evidence, "all 3 of its links failed, while 3 of the 3 links not involving it passed");
  // Half the hosts below the floor: an absolute verdict still names them (a ratio could not).
  for (LinkSample& s : links) s.failed = s.link != "h1:0-h2:1";
  EXPECT_EQ(attribute_by_verdict(links).culprits(), (std::vector<std::string>{"h3", "h4"}));
}

TEST(Attribution, EveryHealthyFleetHasNoCulprit) {
  const Attribution a = attribute_by_value(fleet(5, {}, 10, 10), 0.9);
  EXPECT_TRUE(a.culprits().empty());
  EXPECT_EQ(attribution_text(a, "s", "# "), "# culprit (s): none: all 10 links within 90% of 10 GB/s\n");
}

// ------------------------------------------------------------------------------- bisection

// Runs the search where a group's figure is its slowest node's rate (a ring runs at its slowest
// link), or `between` when the group spans both halves of the fleet and `between` is set.
BisectionSearch simulate(int n, const std::set<int>& slow, int* steps, std::optional<double> between = {}) {
  BisectionSearch s(n, 0.9, [](int x) { return fmt::format("h{}", x + 1); });
  *steps = 0;
  while (!s.done()) {
    std::vector<std::optional<double>> figures;
    for (const BisectionGroup& g : s.next().groups) {
      double f = 10;
      for (int x : g.nodes)
        if (slow.count(x)) f = 1;
      const bool spans = g.nodes.front() < (n + 1) / 2 && g.nodes.back() >= (n + 1) / 2;
      if (between && spans) f = std::min(f, *between);
      figures.push_back(f);
    }
    s.record(figures);
    ++*steps;
    if (*steps > 100) break;
  }
  return s;
}

TEST(Bisection, OneSlowNodeAmongNIsNamedInLogNSteps) {
  for (int n : {3, 4, 5, 7, 8, 16, 33, 64, 1024}) {
    for (int slow : {0, n / 2, n - 1}) {
      SCOPED_TRACE(fmt::format("{} nodes, node {} slow", n, slow));
      int steps = 0;
      const BisectionSearch s = simulate(n, {slow}, &steps);
      EXPECT_EQ(s.culprits(), std::vector<int>{slow});
      EXPECT_LE(steps, bisection_step_bound(n));
      EXPECT_EQ(s.conclusion(), fmt::format("culprit: h{}", slow + 1));
      // Every step's groups are disjoint: they are measured at the same time.
      for (const BisectionStep& step : s.steps()) {
        std::set<int> used;
        for (const BisectionGroup& g : step.groups)
          for (int x : g.nodes) EXPECT_TRUE(used.insert(x).second);
      }
    }
  }
  EXPECT_EQ(bisection_step_bound(1024), 12);
  EXPECT_EQ(bisection_step_bound(4), 4);
}

TEST(Bisection, FourNodesTakeThreeSteps) {
  int steps = 0;
  const BisectionSearch s = simulate(4, {3}, &steps);
  EXPECT_EQ(steps, 3);  // the whole, the halves, the last two each with a healthy node
  ASSERT_EQ(s.steps().size(), 3u);
  EXPECT_EQ(s.steps()[1].groups[0].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(s.steps()[1].groups[0].verdict, "fast");
  EXPECT_EQ(s.steps()[1].groups[1].verdict, "slow");
  EXPECT_EQ(s.steps()[2].groups[1].nodes, (std::vector<int>{1, 3}));  // node 3 padded with healthy node 1
  EXPECT_EQ(s.steps()[2].groups[1].suspects, (std::vector<int>{3}));
}

TEST(Bisection, NoCulpritAFaultBetweenTheHalvesAndTwoNodes) {
  int steps = 0;
  EXPECT_EQ(simulate(8, {}, &steps).conclusion(),
            "no half is faster than the whole job: no single node stands out (the fabric gives this figure, or slow "
            "nodes sit in both halves: --groups pairs tells them apart)");
  EXPECT_EQ(steps, 2);
  const BisectionSearch between = simulate(8, {}, &steps, 2.0);
  EXPECT_TRUE(between.culprits().empty());
  EXPECT_NE(between.conclusion().find("what is slow joins the halves"), std::string::npos);
  const BisectionSearch two = simulate(2, {1}, &steps);
  EXPECT_EQ(two.suspects(), (std::vector<int>{0, 1}));
  EXPECT_EQ(two.conclusion(), "h1, h2 cannot be told apart: there is no other node to measure each with");
}

TEST(Bisection, TwoSlowNodesInOneHalfAreBothNamed) {
  int steps = 0;
  const BisectionSearch s = simulate(16, {2, 5}, &steps);
  EXPECT_EQ(s.culprits(), (std::vector<int>{2, 5}));
  EXPECT_LE(steps, 2 * bisection_step_bound(16));
}

// ----------------------------------------------------- links, --groups pairs and accept on it

// links.csv cells of 4 hosts, one rank each, both directions; those of `slow` at 0.95 GB/s.
std::vector<LinkResult> link_cells(int slow) {
  std::vector<LinkResult> out;
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d) {
      if (s == d) continue;
      LinkResult r;
      r.transport = "tcp";
      r.mode = "pair";
      r.src = s;
      r.dst = d;
      r.src_host = fmt::format("h{}", s + 1);
      r.dst_host = fmt::format("h{}", d + 1);
      r.bytes = 16 << 20;
      r.oneway_gbps = r.bidir_gbps = (s == slow || d == slow) ? 0.95 : 11.0;
      out.push_back(r);
    }
  return out;
}

TEST(LinksAttribution, TheSlowHostIsNamedInTheTextJsonAndCsv) {
  const auto cells = link_cells(1);
  const auto judged = attribute_links(cells, 0.9, 16 << 20);
  ASSERT_EQ(judged.size(), 1u);
  EXPECT_EQ(judged[0].subject(), "tcp one-way at 16 MiB");
  EXPECT_EQ(judged[0].attribution.culprits(), std::vector<std::string>{"h2"});
  const CsvTable t = parse_csv(links_to_csv(cells, judged));
  ASSERT_EQ(t.header.back(), "culprit");
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const bool touches = cells[i].src == 1 || cells[i].dst == 1;
    EXPECT_EQ(t.rows[i].back(), touches ? "h2" : "") << t.rows[i][2];
  }
  const auto j = links_to_json(cells, find_link_outliers(cells, 0.9), {}, judged);
  EXPECT_EQ(j["attribution"][0]["culprits"], Json::array({"h2"}));
  EXPECT_EQ(j["attribution"][0]["transport"], "tcp");
  // The median test alone flags each of h2's cells, naming both ends every time.
  EXPECT_EQ(find_link_outliers(cells, 0.9).size(), 12u);
}

RunRecord pair_row(int a, int b, double busbw, std::uint64_t bytes = 1 << 20) {
  RunRecord r = RecordBuilder()
                    .transport("tcp")
                    .bytes(bytes)
                    .group(fmt::format("pair {}-{}", a, b))
                    .link(fmt::format("h{}:{}-h{}:{}", a + 1, a, b + 1, b))
                    .busbw(busbw);
  r.time_avg_us = r.time_median_us = 100;
  return r;
}

TEST(PairAttribution, ThePairsOfTheSlowHostArePutOnIt) {
  std::vector<RunRecord> rows;
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b) {
      rows.push_back(pair_row(a, b, a == 2 || b == 2 ? 0.9 : 9, 64 << 10));  // a smaller size: not judged
      rows.push_back(pair_row(a, b, a == 2 || b == 2 ? 0.9 : 9));
    }
  mark_group_outliers(rows);
  mark_pair_culprits(rows, 0.9);
  for (const RunRecord& r : rows)
    EXPECT_EQ(r.culprit, r.bytes == (1u << 20) && r.link.find("h3") != std::string::npos ? "h3" : "") << r.group;
  EXPECT_EQ(pair_attribution_report(rows, 0.9),
            "# culprit (allreduce/ring float sum 1M out-of-place): h3: all 2 of its links below 90% of 9 GB/s (0.9 to "
            "0.9 GB/s, 10% to 10%), while 1 of the 1 link not involving it are not\n");
  // The median of 3 pairs is h3's own figure: the group outliers alone flag nothing.
  EXPECT_EQ(group_outlier_report(rows, 0.9), "");
  EXPECT_EQ(pair_attribution_json(rows, 0.9)[0]["culprits"], Json::array({"h3"}));
  EXPECT_TRUE(pair_attribution_json({pair_row(0, 1, 1)}, 0.9)[0]["culprits"].empty());
}

// A row's figures as links.csv gives them: size, time and bandwidth agree (results/row_check.h).
void set_busbw(RunRecord& r, double gbps) {
  r.busbw_gbps = r.algbw_gbps = r.busbw_median_gbps = gbps;
  r.time_avg_us = r.time_median_us = r.time_min_us = r.time_p95_us = r.time_max_us =
      static_cast<double>(r.bytes) / (gbps * 1e9) * 1e6;
  r.iterations = 1;
}

// links.csv as accept reads it: rows of collective "link", the sender's host.
ResultSet links_rows(int slow) {
  ResultSet set;
  for (const LinkResult& c : link_cells(slow)) {
    RunRecord r = RecordBuilder().collective("link").impl("links").transport(c.transport).op("none").bytes(c.bytes);
    r.mode = "pair";
    r.host = c.src_host;
    r.link = link_name(c.src, c.src_host, c.dst, c.dst_host);
    set_busbw(r, *c.oneway_gbps);
    set.rows.push_back(r);
  }
  set.extra.resize(set.rows.size());
  return set;
}

TEST(AcceptAttribution, AFloorFailsTheSlowHostsLinksAndNamesItNotEveryEnd) {
  static const auto rules = parse_rules("rules:\n  - name: links\n    select: {collective: link}\n"
                                        "    require: {min_busbw: 5}\n", "r.yaml");
  const AcceptReport rep = evaluate_rules(rules, {links_rows(3)});
  EXPECT_FALSE(rep.passed);
  ASSERT_TRUE(rep.attribution);
  EXPECT_EQ(rep.attribution->culprits(), std::vector<std::string>{"h4"});
  // Per node: the failing rows are h4's, whichever host sent them.
  for (const PlaceVerdict& n : rep.nodes)
    EXPECT_EQ(n.state, n.name == "h4" ? CheckState::fail : CheckState::pass) << n.name << ": " << n.failed_rows;
  const std::string text = rep.text();
  EXPECT_NE(text.find("# per endpoint (a failing link is put on the end whose every link fails):\n"
                      "#   FAIL h4: culprit: all 3 of its links failed, while 3 of the 3 links not involving it passed\n"
                      "#   PASS h1: 2 of its 3 links pass; its failing links are put on h4\n"),
            std::string::npos)
      << text;
  const std::string xml = rep.junit_xml("t");
  EXPECT_NE(xml.find("<testsuite name=\"endpoints\" tests=\"4\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase classname=\"ccbench.accept.endpoints\" name=\"h4\" time=\"0\">\n      <failure "
                     "message=\"culprit: all 3 of its links failed"),
            std::string::npos);
  // A link at fault between two good hosts fails the link, not its hosts.
  ResultSet one_link = links_rows(-1);
  for (RunRecord& r : one_link.rows)
    if (r.link == "h1:0-h2:1") set_busbw(r, 1);
  const AcceptReport link = evaluate_rules(rules, {one_link});
  EXPECT_TRUE(link.attribution->culprits().empty());
  for (const PlaceVerdict& n : link.nodes) EXPECT_EQ(n.state, CheckState::pass) << n.name;
  EXPECT_NE(link.text().find("#   FAIL h1:0-h2:1: the link itself"), std::string::npos);
}

// -------------------------------------------------------------- the model of an acceptance run

TEST(AcceptanceEstimate, RoundsCostNMinus1PairStepsAndTheSearchLogN) {
  SystemTopology t;
  t.name = "test";
  t.nodes = 1024;
  t.node.ranks = 1;
  t.node.fabric = IntraFabric::host;
  t.node.gpu_link = {100, 1};
  t.node.nics = 1;
  t.node.nic = {50, 2};
  AcceptanceRequest req;
  req.sizes = {64 << 20};
  req.step_setup_s = 1;
  const AcceptanceEstimate e = estimate_acceptance(t, req);
  ASSERT_EQ(e.phases.size(), 4u);
  const double pair = measured_seconds(t, 2, req) + 1;
  EXPECT_EQ(e.phases[1].steps, 1023);
  EXPECT_EQ(e.phases[1].groups_per_step, 512);
  EXPECT_DOUBLE_EQ(e.phases[1].seconds, 1023 * pair);
  EXPECT_EQ(e.phases[2].steps, 1024 * 1023 / 2);
  EXPECT_DOUBLE_EQ(e.phases[2].seconds, 1024.0 * 1023 / 2 * pair);
  EXPECT_EQ(e.phases[3].steps, 11);  // 10 halvings and one confirmation
  EXPECT_LT(e.phases[3].seconds, 12 * (measured_seconds(t, 1024, req) + 1));
  EXPECT_GT(e.phases[3].seconds, 11.0);
  // One 64 MiB ring all-reduce over 2 nodes: (5 + 2 x 20) calls.
  EXPECT_NEAR(measured_seconds(t, 2, req), 45 * (2.0 * 64 * 1048576 / 2 / 50e9 + 2 * 2e-6), 1e-3);
  EXPECT_DOUBLE_EQ(e.sequence_seconds, e.phases[0].seconds + e.phases[1].seconds + e.phases[3].seconds);
  EXPECT_EQ(human_duration(90), "1.5 min");
  EXPECT_EQ(human_duration(2 * 86400), "2 d");
}

}  // namespace
}  // namespace ccbench
