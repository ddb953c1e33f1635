// Ring orders (topologies/ring_order.h): parsing --ring-order, validation messages, and the
// topology-aware order on synthetic layouts of 1 to 1024 ranks over one or many nodes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "core/error.h"
#include "topologies/gpu_discovery.h"
#include "topologies/ring_order.h"
#include "usage_error.h"

namespace ccbench {
namespace {

// `n` ranks placed round-robin over `hosts` hosts (mpirun --map-by node): rank r on host r % hosts.
RankLayout round_robin(int n, int hosts) {
  std::vector<std::string> names;
  for (int r = 0; r < n; ++r) names.push_back("host" + std::to_string(r % hosts));
  return RankLayout::from_hosts(0, names);
}

// How many times the closed ring steps from one node to another.
int node_crossings(const std::vector<int>& order, const RankLayout& l) {
  int crossings = 0;
  for (size_t i = 0; i < order.size(); ++i)
    crossings += l.node_of[static_cast<size_t>(order[i])] != l.node_of[static_cast<size_t>(order[(i + 1) % order.size()])];
  return crossings;
}

TEST(RingOrder, ParsesNamesAndInlineLists) {
  EXPECT_EQ(parse_ring_order("rank").kind, RingOrderKind::rank);
  EXPECT_EQ(parse_ring_order("topo").kind, RingOrderKind::topo);
  const RingOrderChoice c = parse_ring_order("0,2,1,3");
  EXPECT_EQ(c.kind, RingOrderKind::list);
  EXPECT_EQ(c.list, (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(c.text, "0,2,1,3");
  EXPECT_EQ(parse_ring_order("3 1, 2 0").list, (std::vector<int>{3, 1, 2, 0}));
  EXPECT_EQ(c.kind_name(), "list");
}

TEST(RingOrder, ReadsAFileWithComments) {
  const std::string path = testing::TempDir() + "ring_order_test.txt";
  {
    std::ofstream f(path);
    f << "# two nodes of two ranks\n0, 2   # node a\n1 3\n";
  }
  EXPECT_EQ(parse_ring_order(path).list, (std::vector<int>{0, 2, 1, 3}));
  {
    std::ofstream f(path);
    f << "0 1\n2 x3\n";
  }
  const std::string bad_word = usage_error([&] { parse_ring_order(path); });
  EXPECT_NE(bad_word.find("line 2: 'x3' is not a rank"), std::string::npos) << bad_word;
  {
    std::ofstream f(path);
    f << "# nothing\n";
  }
  EXPECT_NE(usage_error([&] { parse_ring_order(path); }).find("no ranks given"), std::string::npos);
  std::remove(path.c_str());
}

TEST(RingOrder, RejectsWhatIsNotARankOrAFile) {
  const std::string missing = usage_error([] { parse_ring_order("no/such/order.txt"); });
  EXPECT_NE(missing.find("no readable file"), std::string::npos) << missing;
  EXPECT_NE(missing.find("rank, topo"), std::string::npos) << missing;
  EXPECT_NE(usage_error([] { parse_ring_order(",,"); }).find("no ranks given"), std::string::npos);
}

TEST(RingOrder, ValidationNamesEveryProblem) {
  EXPECT_NO_THROW(validate_ring_order({0, 2, 1, 3}, 4, "x"));
  const std::string repeated = usage_error([] { validate_ring_order({0, 1, 1, 3}, 4, "--ring-order 0,1,1,3"); });
  EXPECT_NE(repeated.find("--ring-order 0,1,1,3: 4 rank(s) given for a run of 4"), std::string::npos) << repeated;
  EXPECT_NE(repeated.find("repeated 1"), std::string::npos) << repeated;
  EXPECT_NE(repeated.find("missing 2"), std::string::npos) << repeated;
  EXPECT_NE(repeated.find("every rank from 0 to 3 exactly once"), std::string::npos) << repeated;
  const std::string outside = usage_error([] { validate_ring_order({0, 1, 2, 7}, 4, "o"); });
  EXPECT_NE(outside.find("no such rank 7"), std::string::npos) << outside;
  EXPECT_NE(outside.find("missing 3"), std::string::npos) << outside;
  const std::string short_list = usage_error([] { validate_ring_order({1, 0}, 3, "o"); });
  EXPECT_NE(short_list.find("2 rank(s) given for a run of 3: missing 2"), std::string::npos) << short_list;
  // A list checked against the run it is used in.
  const RingOrderChoice c = parse_ring_order("0,2,1,3");
  EXPECT_EQ(ring_order(c, round_robin(4, 1)), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_NE(usage_error([&] { ring_order(c, round_robin(5, 1)); }).find("missing 4"), std::string::npos);
}

TEST(RingOrder, RankOrderIsTheIdentity) {
  for (int n : {1, 2, 3, 7, 1024}) {
    const std::vector<int> o = ring_order(RingOrderChoice{}, round_robin(n, 1));
    ASSERT_EQ(o.size(), static_cast<size_t>(n));
    EXPECT_TRUE(is_rank_order(o));
  }
  EXPECT_FALSE(is_rank_order({0, 2, 1, 3}));
  EXPECT_EQ(ring_position({3, 0, 2, 1}, 2), 2);
}

// Round-robin placement is the case the topo order is for: rank order would cross a node boundary
// at every step; topo crosses each boundary once.
TEST(RingOrder, TopoKeepsNodesContiguous) {
  const RankLayout two = round_robin(4, 2);
  EXPECT_EQ(topo_ring_order(two), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(node_crossings(ring_order(RingOrderChoice{}, two), two), 4);
  EXPECT_EQ(node_crossings(topo_ring_order(two), two), 2);
  std::vector<int> counts;
  for (int n = 1; n <= 16; ++n) counts.push_back(n);
  counts.insert(counts.end(), {33, 100, 255, 511, 1000, 1023, 1024});
  for (int n : counts) {
    for (int hosts : {1, 2, 3, 8}) {
      if (hosts > n) continue;
      const RankLayout l = round_robin(n, hosts);
      const std::vector<int> o = topo_ring_order(l);
      EXPECT_NO_THROW(validate_ring_order(o, n, "topo"));
      EXPECT_EQ(node_crossings(o, l), hosts == 1 ? 0 : hosts) << n << " ranks on " << hosts << " hosts";
      for (size_t i = 1; i < o.size(); ++i) {  // nodes in order, ranks of one node ascending
        if (l.node_of[static_cast<size_t>(o[i])] == l.node_of[static_cast<size_t>(o[i - 1])]) {
          EXPECT_LT(o[i - 1], o[i]);
        }
      }
    }
  }
}

TEST(RingOrder, TopoFollowsEmulatedNodes) {
  RankLayout l = RankLayout::from_hosts(0, {"h", "h", "h", "h"}, {"b", "a", "b", "a"});  // CCBENCH_HOSTID
  EXPECT_EQ(topo_ring_order(l), (std::vector<int>{0, 2, 1, 3}));
  RankLayout e = round_robin(4, 1);
  e.emulate_nodes(2);  // contiguous halves: rank order already keeps them together
  EXPECT_EQ(topo_ring_order(e), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(node_crossings(topo_ring_order(e), e), 2);
}

TEST(RingOrder, TopoGroupsRanksOfOneNumaNode) {
  RankLayout l = round_robin(8, 2);  // host0: ranks 0 2 4 6, host1: 1 3 5 7
  l.numa_of = {1, 1, 0, 0, 1, -1, 0, 0};
  // host0: NUMA 0 (2, 6) then NUMA 1 (0, 4); host1: NUMA 0 (3, 7), NUMA 1 (1), unknown (5) last.
  EXPECT_EQ(topo_ring_order(l), (std::vector<int>{2, 6, 0, 4, 3, 7, 1, 5}));
  const RankLayout sub = l.subset({0, 1, 2, 3});  // a group keeps its ranks' NUMA nodes
  EXPECT_EQ(sub.numa_of, (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(topo_ring_order(sub), (std::vector<int>{2, 0, 3, 1}));
}

using Links = std::vector<std::vector<int>>;
constexpr int kUnknown = kUnknownLinks;

// The NVLink links of a closed ring, one per step (the last back to the first).
std::vector<int> ring_links(const std::vector<int>& order, const Links& links) {
  std::vector<int> out;
  for (size_t i = 0; i < order.size(); ++i)
    out.push_back(links[static_cast<size_t>(order[i])][static_cast<size_t>(order[(i + 1) % order.size()])]);
  return out;
}

// `n` GPUs of one host, every pair joined by `links` NVLinks.
Links uniform(int n, int links) {
  Links m(static_cast<size_t>(n), std::vector<int>(static_cast<size_t>(n), links));
  for (int i = 0; i < n; ++i) m[static_cast<size_t>(i)][static_cast<size_t>(i)] = kSameGpuLinks;
  return m;
}

// DGX-1's hybrid cube mesh as `nvidia-smi topo -m` shows it: NV1 or NV2 between neighbours, SYS
// (0 NVLinks) between the others.
const Links kCubeMesh = {{0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0},
                         {2, 1, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
                         {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};

TEST(RingOrder, TopoFollowsNvlinkNeighboursInAHybridCubeMesh) {
  RankLayout l = round_robin(8, 1);
  l.numa_of = {0, 0, 0, 0, 1, 1, 1, 1};
  // The NUMA order alone steps 3 -> 4 and 7 -> 0, between GPUs with no NVLink.
  EXPECT_EQ(ring_links(topo_ring_order(l), kCubeMesh), (std::vector<int>{1, 2, 2, 0, 1, 2, 2, 0}));
  const std::vector<int> order = topo_ring_order(l, kCubeMesh);
  EXPECT_EQ(order, (std::vector<int>{0, 3, 2, 1, 5, 6, 7, 4}));
  EXPECT_EQ(ring_links(order, kCubeMesh), std::vector<int>(8, 2));  // every step over 2 links, closing included
  EXPECT_NO_THROW(validate_ring_order(order, 8, "topo"));
}

TEST(RingOrder, TopoKeepsNvlinkPairsAdjacentOnEveryNode) {
  // 2 hosts of 4 GPUs as two NVLink pairs joined by PCIe: host0 holds ranks 0 2 4 6 with pairs
  // (0 4) and (2 6), host1 ranks 1 3 5 7 with (1 5) and (3 7); nothing known across hosts.
  const RankLayout l = round_robin(8, 2);
  Links links(8, std::vector<int>(8, kUnknown));
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b)
      if (a % 2 == b % 2) links[static_cast<size_t>(a)][static_cast<size_t>(b)] = a == b ? kSameGpuLinks : (a - b) % 4 == 0 ? 4 : 0;
  const std::vector<int> order = topo_ring_order(l, links);
  EXPECT_EQ(order, (std::vector<int>{0, 4, 2, 6, 1, 5, 3, 7}));
  EXPECT_EQ(node_crossings(order, l), 2);
  for (int a = 0; a < 8; ++a) {  // each rank next to its NVLink partner
    const int partner = (a + 4) % 8, pa = ring_position(order, a), pb = ring_position(order, partner);
    EXPECT_TRUE(std::abs(pa - pb) == 1 || std::abs(pa - pb) == 7) << a << " and " << partner;
  }
}

TEST(RingOrder, TopoPutsRanksOfOneGpuNextToEachOther) {
  // 4 ranks on 2 GPUs joined by NV18 (rank r on GPU r % 2): the ring crosses NVLink twice, not 4 times.
  RankLayout l = round_robin(4, 1);
  Links links = uniform(4, 18);
  links[0][2] = links[2][0] = links[1][3] = links[3][1] = kSameGpuLinks;
  l.gpu_links = links;
  EXPECT_EQ(topo_ring_order(l), (std::vector<int>{0, 2, 1, 3}));
  const RankLayout sub = l.subset({0, 2, 3});  // a group keeps its ranks' links
  EXPECT_EQ(sub.gpu_links, (Links{{kSameGpuLinks, kSameGpuLinks, 18}, {kSameGpuLinks, kSameGpuLinks, 18}, {18, 18, kSameGpuLinks}}));
}

TEST(RingOrder, TopoKeepsTheNumaOrderWhereLinksAreEqualOrUnknown) {
  RankLayout l = round_robin(4, 1);
  l.numa_of = {1, 1, 0, 0};
  const std::vector<int> numa_order = {2, 3, 0, 1};
  ASSERT_EQ(topo_ring_order(l), numa_order);
  EXPECT_EQ(topo_ring_order(l, uniform(4, 18)), numa_order);  // NVSwitch: every pair alike
  Links pairs = uniform(4, 0);
  pairs[0][1] = pairs[1][0] = pairs[2][3] = pairs[3][2] = 4;
  pairs[0][3] = kUnknown;  // one pair not known
  EXPECT_EQ(topo_ring_order(l, pairs), numa_order);
  EXPECT_EQ(topo_ring_order(l, Links{}), numa_order);         // not gathered
  EXPECT_EQ(topo_ring_order(l, uniform(3, 4)), numa_order);   // not this layout's
  pairs[0][3] = 0;
  EXPECT_EQ(topo_ring_order(l, pairs), numa_order);  // known, and the NUMA order keeps the pairs together
  Links across = uniform(4, 0);
  across[0][2] = across[2][0] = across[1][3] = across[3][1] = 4;  // pairs (0 2) and (1 3), across NUMA nodes
  // From 2 to its partner 0, then 1 (no link to either, but 0's NUMA node), then its partner 3.
  EXPECT_EQ(topo_ring_order(l, across), (std::vector<int>{2, 0, 1, 3}));
}

TEST(RingOrder, NvlinkRowReadsTheNvmlPathMatrix) {
  const nlohmann::ordered_json gpus = {
      {"available", true},
      {"gpus", {{{"pci", "0000:19:00.0"}}, {{"pci", "0000:3b:00.0"}}, {{"pci", "0000:5d:00.0"}}}},
      {"paths", {{"X", "NV4", "PHB"}, {"NV4", "X", "?"}, {"PHB", "?", "X"}}}};
  const std::vector<std::string> peers = {"00000000:19:00.0", "0000:3B:00.0", "0000:5d:00.0", "", "0000:99:00.0"};
  EXPECT_EQ(nvlink_row(gpus, "00000000:19:00.0", peers), (std::vector<int>{kSameGpuLinks, 4, 0, kUnknown, kUnknown}));
  EXPECT_EQ(nvlink_row(gpus, "0000:3b:00.0", peers), (std::vector<int>{4, kSameGpuLinks, kUnknown, kUnknown, kUnknown}));
  EXPECT_EQ(nvlink_row(gpus, "0000:99:00.0", peers), std::vector<int>(5, kUnknown));  // not a GPU NVML lists
  const nlohmann::ordered_json none = {{"available", false}, {"reason", "nvmlInit failed"}};
  EXPECT_EQ(nvlink_row(none, "0000:19:00.0", peers), std::vector<int>(5, kUnknown));
}

TEST(RingOrder, DescribesLongOrdersShortly) {
  EXPECT_EQ(describe_ring_order({0, 2, 1, 3}), "0 2 1 3");
  EXPECT_EQ(describe_ring_order({0, 1, 2, 3, 4}, 3), "0 1 2 ... (5 ranks)");
}

}  // namespace
}  // namespace ccbench
