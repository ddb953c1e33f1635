// harness/groups and the group outliers of results/stragglers: which ranks form each group, the
// rounds they run in, the sub-group layout, and which groups are flagged.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/groups/groups.h"
#include "core/error.h"
#include "results/stragglers.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

// 4 ranks on one host split into 2 emulated nodes of 2.
RankLayout two_by_two(int rank = 0) {
  RankLayout l = RankLayout::from_hosts(rank, {"h", "h", "h", "h"});
  l.emulate_nodes(2);
  return l;
}

std::vector<std::string> names(const std::vector<RankGroup>& g) {
  std::vector<std::string> out;
  for (const RankGroup& x : g) out.push_back(x.name);
  return out;
}

TEST(Groups, WorldNodePairsAndRails) {
  const RankLayout l = two_by_two();
  EXPECT_EQ(make_groups("world", l).at(0).ranks, (std::vector<int>{0, 1, 2, 3}));
  const auto node = make_groups("node", l);
  EXPECT_EQ(names(node), (std::vector<std::string>{"node0", "node1"}));
  EXPECT_EQ(node[1].ranks, (std::vector<int>{2, 3}));
  const auto pairs = make_groups("pairs", l);
  ASSERT_EQ(pairs.size(), 6u);  // n(n-1)/2
  EXPECT_EQ(pairs[2].name, "pair 0-3");
  EXPECT_EQ(pairs[2].ranks, (std::vector<int>{0, 3}));
  const auto rails = make_groups("rails", l);
  EXPECT_EQ(names(rails), (std::vector<std::string>{"rail0", "rail1"}));
  EXPECT_EQ(rails[0].ranks, (std::vector<int>{0, 2}));
}

TEST(Groups, RoundsRunDisjointGroupsTogetherAndRefuseSharedRanksUnlessSerial) {
  const RankLayout l = two_by_two();
  EXPECT_EQ(group_rounds(make_groups("node", l), false), (std::vector<std::vector<size_t>>{{0, 1}}));
  EXPECT_EQ(group_rounds(make_groups("node", l), true), (std::vector<std::vector<size_t>>{{0}, {1}}));
  try {
    group_rounds(make_groups("pairs", l), false);
    FAIL() << "overlapping groups ran together";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_STREQ(e.what(), "--groups: groups pair 0-1 and pair 0-2 share rank 0; overlapping groups need --serial");
  }
}

TEST(Groups, FileGroupsAndTheirErrors) {
  const std::string path = testing::TempDir() + "/groups.txt";
  std::ofstream(path) << "# two groups\nleft: 0 1\n2 3  # unnamed\n\n";
  const auto g = make_groups(path, two_by_two());
  EXPECT_EQ(names(g), (std::vector<std::string>{"left", "group1"}));
  EXPECT_EQ(g[1].ranks, (std::vector<int>{2, 3}));
  auto error_of = [](const std::string& text) {
    const std::string p = testing::TempDir() + "/bad-groups.txt";
    std::ofstream(p) << text;
    try {
      make_groups(p, two_by_two());
    } catch (const Error& e) {
      return std::string(e.what()).substr(p.size() + 10);  // after "--groups " and the path
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("0 4\n"), "line 1: '4' is not a rank of this run (valid: 0 to 3)");
  EXPECT_EQ(error_of("0 x\n"), "line 1: 'x' is not a rank of this run (valid: 0 to 3)");
  EXPECT_EQ(error_of("1 1\n"), "line 1: a rank is listed twice in one group");
  EXPECT_EQ(error_of("a: 2\n"), "line 1: a group needs at least 2 ranks");
  EXPECT_THROW(make_groups(testing::TempDir() + "/none.txt", two_by_two()), Error);
  EXPECT_THROW(make_groups("pairs", RankLayout::from_hosts(0, {"h"})), Error);
}

TEST(Groups, SubsetRenumbersRanksAndKeepsEmulatedNodes) {
  const RankLayout sub = two_by_two(3).subset({1, 3});
  EXPECT_EQ(sub.rank, 1);
  EXPECT_EQ(sub.nranks, 2);
  EXPECT_EQ(sub.nodes, 2);  // rank 1 on node 0, rank 3 on node 1
  EXPECT_EQ(sub.node_of, (std::vector<int>{0, 1}));
  EXPECT_EQ(sub.local_rank_of, (std::vector<int>{0, 0}));
  EXPECT_EQ(sub.host_of, (std::vector<std::string>{"h", "h"}));
  EXPECT_TRUE(sub.emulated);
}

RunRecord group_row(const std::string& group, double busbw, std::uint64_t bytes = 1024) {
  return RecordBuilder().bytes(bytes).group(group).busbw(busbw);
}

TEST(Groups, OutliersAreGroupsBelowTheThresholdOfLikeGroups) {
  std::vector<RunRecord> rows{group_row("pair 0-1", 10), group_row("pair 0-2", 2), group_row("pair 1-2", 9.5),
                              group_row("pair 0-1", 10, 2048), group_row("world", 1)};
  rows.back().group = "world";
  mark_group_outliers(rows);
  ASSERT_TRUE(rows[1].group_outlier_ratio);
  EXPECT_DOUBLE_EQ(*rows[0].group_outlier_ratio, 0.95);  // median 9.5 of 10, 2, 9.5
  EXPECT_DOUBLE_EQ(*rows[1].group_outlier_ratio, 4.75);
  EXPECT_FALSE(rows[3].group_outlier_ratio);  // no like group at 2K
  EXPECT_FALSE(rows[4].group_outlier_ratio);  // world rows are not groups
  EXPECT_EQ(group_outlier_report(rows, 0.9),
            "# group outlier: pair 0-2 at 0.211 of the median busbw of 3 like groups in allreduce/ring float sum 1K "
            "out-of-place (below 90 % in 1 of 1 rows)\n");
  EXPECT_EQ(group_outlier_report(rows, 0.2), "");
}

}  // namespace
}  // namespace ccbench
