// The performance model and topology files: presets load, malformed files are named with their
// line, the model's properties hold, it agrees with published and measured figures, and it is fast.
#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "results/csv_reader.h"
#include "core/error.h"
#include "harness/model/model.h"
#include "topologies/system.h"

namespace ccbench {
namespace {

namespace fs = std::filesystem;
const fs::path kPresets = fs::path(CCBENCH_SOURCE_DIR) / "topologies/presets";

SystemTopology preset(const std::string& name) { return load_topology((kPresets / (name + ".yaml")).string()); }

double busbw(const SystemTopology& t, Collective c, const std::string& algo, std::uint64_t bytes) {
  return CollectiveModel(t, c, algo).predict(bytes).busbw_gbps;
}

// The usage error a text gives, or "" when it parses.
std::string error_of(const std::string& yaml) {
  try {
    parse_topology(yaml, "t.yaml");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.what();
  }
  return "";
}

const char* kValid = "name: x\nnodes: 2\nnode:\n  ranks: 4\n  fabric: nvswitch\n"
                     "  gpu_link: {bandwidth_gbps: 100, latency_us: 1}\n  nics: 2\n  nic: {bandwidth_gbps: 10}\n";

TEST(TopologyFile, EveryPresetLoadsAndSurvivesADump) {
  int presets = 0;
  for (const auto& e : fs::directory_iterator(kPresets)) {
    SCOPED_TRACE(e.path().string());
    const SystemTopology t = load_topology(e.path().string());
    const SystemTopology again = parse_topology(dump_topology(t), "dump");
    EXPECT_EQ(again.name, t.name);
    EXPECT_EQ(again.ranks(), t.ranks());
    EXPECT_EQ(again.node.fabric, t.node.fabric);
    EXPECT_DOUBLE_EQ(again.node.gpu_link.bandwidth_gbps, t.node.gpu_link.bandwidth_gbps);
    EXPECT_EQ(again.node.nics, t.node.nics);
    EXPECT_DOUBLE_EQ(again.node.switch_uplink.bandwidth_gbps, t.node.switch_uplink.bandwidth_gbps);
    EXPECT_DOUBLE_EQ(again.node.kernels.block_gbps, t.node.kernels.block_gbps);
    EXPECT_DOUBLE_EQ(again.node.kernels.local_copy_gbps, t.node.kernels.local_copy_gbps);
    ++presets;
  }
  EXPECT_GE(presets, 6);
}

TEST(TopologyFile, MalformedFilesNameTheLineAndWhatIsExpected) {
  EXPECT_EQ(error_of(kValid), "");
  EXPECT_EQ(error_of("name: x\nnode: {ranks: 2\n"), error_of("name: x\nnode: {ranks: 2\n"));
  EXPECT_NE(error_of("name: x\nnode: {ranks: 2\n").find("t.yaml:"), std::string::npos);
  EXPECT_NE(error_of("name: x\nnode: {ranks: 2\n").find("not valid YAML"), std::string::npos);
  const std::string unknown = error_of(std::string(kValid) + "  nisc: 3\n");
  EXPECT_NE(unknown.find("t.yaml:9: unknown key 'nisc' in 'node'"), std::string::npos) << unknown;
  const std::string range = error_of("name: x\nnode:\n  ranks: 0\n  fabric: host\n  gpu_link: {bandwidth_gbps: 1}\n");
  EXPECT_NE(range.find("t.yaml:3: 'node.ranks' is 0; expected a number from 1 to"), std::string::npos) << range;
  const std::string fabric = error_of("name: x\nnode:\n  ranks: 2\n  fabric: infiniband\n  gpu_link: {bandwidth_gbps: 1}\n");
  EXPECT_NE(fabric.find("t.yaml:4: 'node.fabric' is 'infiniband'; expected one of: nvswitch, nvlink_mesh, pcie, host"),
            std::string::npos) << fabric;
  const std::string text = error_of("name: x\nnode:\n  ranks: two\n  fabric: host\n  gpu_link: {bandwidth_gbps: 1}\n");
  EXPECT_NE(text.find("t.yaml:3: 'node.ranks' is 'two'"), std::string::npos) << text;
  const std::string missing = error_of("name: x\nnode:\n  ranks: 2\n  fabric: host\n");
  EXPECT_NE(missing.find("'node' needs 'gpu_link'"), std::string::npos) << missing;
  const std::string nonics = error_of("name: x\nnodes: 2\nnode:\n  ranks: 2\n  fabric: host\n  gpu_link: {bandwidth_gbps: 1}\n");
  EXPECT_NE(nonics.find("2 nodes need NICs"), std::string::npos) << nonics;
  EXPECT_NE(error_of("- just\n- a list\n").find("expected a mapping"), std::string::npos);
  const std::string half = error_of(std::string(kValid) + "  kernels: {block_gbps: 10}\n");
  EXPECT_NE(half.find("t.yaml:9: 'node.kernels' needs 'local_copy_gbps'"), std::string::npos) << half;
  const std::string typo = error_of(std::string(kValid) + "  kernels: {block_gbps: 10, copy_gbps: 5}\n");
  EXPECT_NE(typo.find("unknown key 'copy_gbps' in 'node.kernels'"), std::string::npos) << typo;
}

TEST(TopologyFile, KernelFiguresAreOptionalAndOnlyTheMeasuredMachinesHaveThem) {
  EXPECT_FALSE(parse_topology(kValid, "t.yaml").node.kernels.described());
  const SystemTopology nv = preset("h200x2-nv18");
  EXPECT_DOUBLE_EQ(nv.node.kernels.block_gbps, 10.2);
  EXPECT_DOUBLE_EQ(nv.node.kernels.local_copy_gbps, 1963);
  EXPECT_TRUE(preset("h200x2-host").node.kernels.described());
  EXPECT_FALSE(preset("h200-8gpu-nvswitch").node.kernels.described());
}

TEST(Model, TimeGrowsWithSizeForEveryAlgorithm) {
  for (const char* name : {"h200x2-nv18", "h200-8gpu-nvswitch", "multinode-8gpu-8ndr", "pcie-gen5-8gpu"}) {
    const SystemTopology t = preset(name);
    for (Collective c : {Collective::allreduce, Collective::allgather, Collective::reducescatter})
      for (const std::string& algo : model_algorithms()) {
        const CollectiveModel m(t, c, algo);
        double last = 0;
        for (std::uint64_t bytes = 8; bytes <= (4ull << 30); bytes *= 4) {
          const Prediction p = m.predict(bytes);
          if (!p.unsupported.empty()) break;
          EXPECT_GT(p.time_us, last) << name << " " << algo << " " << bytes;
          last = p.time_us;
        }
      }
  }
}

TEST(Model, LargeSizesReachTheBottleneckLink) {
  // Two GPUs on one NVLink pair: every ring step crosses the pair, so busbw tends to its bandwidth.
  const SystemTopology nv = preset("h200x2-nv18");
  EXPECT_NEAR(busbw(nv, Collective::allreduce, "ring", 64ull << 30), 369.0, 369.0 * 0.005);
  EXPECT_NEAR(busbw(nv, Collective::allgather, "ring", 64ull << 30), 369.0, 369.0 * 0.005);
  // A ring across nodes: one ring per NIC, each through its own NIC; the NICs are the bottleneck.
  SystemTopology net = parse_topology(kValid, "t");
  EXPECT_NEAR(busbw(net, Collective::allreduce, "ring", 64ull << 30), 2 * 10.0, 2 * 10.0 * 0.01);
}

TEST(Model, ASharedNicHalvesEachFlowsBandwidth) {
  // Two ranks per node, NVLink-fast inside: hierarchical all-reduce sends one inter-node ring per
  // local rank. With one NIC the two rings share it; with two each has its own.
  SystemTopology t = parse_topology(kValid, "t");
  t.node.ranks = 2;
  t.node.gpu_link.bandwidth_gbps = 1e4;
  const std::uint64_t big = 64ull << 30;
  const double two_nics = busbw(t, Collective::allreduce, "hier", big);
  t.node.nics = 1;
  const double one_nic = busbw(t, Collective::allreduce, "hier", big);
  EXPECT_NEAR(one_nic / two_nics, 0.5, 0.01);
}

// CPU ranks on `nodes` nodes of `ranks` each, host links of `intra` GB/s (1 us), `nics` NICs of
// `nic` GB/s (2 us) per node.
SystemTopology cpu_nodes(int nodes, int ranks, double intra, int nics, double nic) {
  SystemTopology t = parse_topology("name: c\nnodes: 2\nnode:\n  ranks: 2\n  fabric: host\n"
                                    "  gpu_link: {bandwidth_gbps: 1, latency_us: 1}\n  nics: 1\n"
                                    "  nic: {bandwidth_gbps: 1, latency_us: 2}\n",
                                    "c");
  t.nodes = nodes;
  t.node.ranks = ranks;
  t.node.gpu_link.bandwidth_gbps = intra;
  t.node.nics = nics;
  t.node.nic.bandwidth_gbps = nic;
  return t;
}

TEST(Model, HierLeaderTimeGrowsWithSizeAcrossItsSlices) {
  for (int nodes : {1, 3}) {
    const CollectiveModel m(cpu_nodes(nodes, 4, 10, 1, 5), Collective::allreduce, "hier-leader");
    double last = 0;
    // Steps of 1.5x pass the 256 KiB slice boundary between whole slices and parts of them.
    for (double bytes = 8; bytes <= (1ull << 32); bytes *= 1.5) {
      const Prediction p = m.predict(static_cast<std::uint64_t>(bytes));
      ASSERT_TRUE(p.unsupported.empty()) << p.unsupported;
      EXPECT_GT(p.time_us, last) << nodes << " nodes, " << bytes << " B";
      last = p.time_us;
    }
  }
}

TEST(Model, HierLeaderOnOneNodeIsItsTwoChains) {
  // One node of 4 ranks at 10 GB/s (1e4 B/us), 1 us a hop: a chain reduce (3 hops) and a chain
  // broadcast (3 hops), each pipelined in 256 KiB slices: 3 latencies + all bytes over the link +
  // 2 slices of pipeline fill.
  const SystemTopology t = cpu_nodes(1, 4, 10, 1, 5);
  for (double bytes : {4096.0, 262144.0, 64.0 * (1 << 20)}) {
    const double chain = 3 * 1.0 + bytes / 1e4 + 2 * std::min(bytes, 262144.0) / 1e4;
    const Prediction p = CollectiveModel(t, Collective::allreduce, "hier-leader").predict(static_cast<std::uint64_t>(bytes));
    EXPECT_NEAR(p.time_us, 2 * chain, 1e-9 * p.time_us) << bytes;
    // The NICs are not on its path.
    SystemTopology fast_nics = t;
    fast_nics.node.nic.bandwidth_gbps = 1000;
    EXPECT_DOUBLE_EQ(CollectiveModel(fast_nics, Collective::allreduce, "hier-leader").predict(static_cast<std::uint64_t>(bytes)).time_us,
                     p.time_us);
  }
}

TEST(Model, HierLeaderLargeSizesReachTheLeadersNic) {
  // Fast links inside the node: the leaders' ring over one NIC per node sets the pace, ring
  // all-reduce of N leaders moving 2(N-1)/N of S through it; more NICs per node do not help.
  const std::uint64_t big = 64ull << 30;
  for (int nodes : {2, 4, 16}) {
    const double asymptote = 10.0 * nodes / (2.0 * (nodes - 1));
    for (int nics : {1, 4}) {
      const Prediction p = CollectiveModel(cpu_nodes(nodes, 4, 1e5, nics, 10), Collective::allreduce, "hier-leader").predict(big);
      EXPECT_NEAR(p.algbw_gbps, asymptote, asymptote * 0.01) << nodes << " nodes, " << nics << " NICs";
    }
  }
}

TEST(Model, HierLeaderIsSlowerThanTwoLevelHierAtLargeSizes) {
  // Everything through the leader: full-size chains in the node where two-level hier moves
  // (L-1)/L of S per rank, and one NIC where two-level hier spreads its L rings over the node's
  // NICs (with one NIC per node only the chains differ); with one rank per node the two are the
  // same ring.
  const std::uint64_t big = 1ull << 30;
  for (int nodes : {2, 8})
    for (int ranks : {2, 4, 8})
      for (int nics : {1, ranks}) {
        const SystemTopology t = cpu_nodes(nodes, ranks, 10, nics, 5);
        const double leader = busbw(t, Collective::allreduce, "hier-leader", big);
        const double two_level = busbw(t, Collective::allreduce, "hier", big);
        EXPECT_LT(leader, (nics > 1 ? 0.6 : 0.99) * two_level) << nodes << " nodes x " << ranks << " ranks, " << nics << " NICs";
      }
  const SystemTopology single = cpu_nodes(4, 1, 10, 1, 5);
  EXPECT_NEAR(busbw(single, Collective::allreduce, "hier-leader", big), busbw(single, Collective::allreduce, "hier", big),
              1e-9 * busbw(single, Collective::allreduce, "hier", big));
  EXPECT_NE(CollectiveModel(single, Collective::allgather, "hier-leader").predict(big).unsupported.find("allreduce only"),
            std::string::npos);
}

TEST(Model, PresetsAgreeWithPublishedNcclRingFigures) {
  // Published figures (evidence published-20261130-figures): 8-GPU NVSwitch ring all-reduce
  // 365-370 GB/s; multi-node ring with 8 NDR NICs per node about min(370, 8 x 46-48) GB/s; 8
  // PCIe-only GPUs about 28 GB/s.
  EXPECT_NEAR(busbw(preset("h200-8gpu-nvswitch"), Collective::allreduce, "nccl-ring", 4ull << 30), 367.5, 367.5 * 0.15);
  SystemTopology cluster = preset("multinode-8gpu-8ndr");
  for (int nodes : {2, 4}) {
    cluster.nodes = nodes;
    EXPECT_NEAR(busbw(cluster, Collective::allreduce, "nccl-ring", 4ull << 30), 370.0, 370.0 * 0.15) << nodes;
  }
  EXPECT_NEAR(busbw(preset("pcie-gen5-8gpu"), Collective::allreduce, "ring", 1ull << 30), 28.0, 28.0 * 0.15);
}

TEST(Model, RingAllReduceWithinFifteenPercentOfTheMeasuredTwoGpuMachine) {
  // Our ring kernel on 2 x H200 (evidence h200x2-20261130-sweep-cc01c2c, kept in tests/fixtures).
  const auto rows = read_results_csv(std::string(CCBENCH_SOURCE_DIR) +
                                     "/tests/fixtures/h200x2-20261130-sweep-cc01c2c/results.csv");
  const SystemTopology t = preset("h200x2-nv18");
  const CollectiveModel model(t, Collective::allreduce, "ring");
  int compared = 0;
  for (const RunRecord& r : rows) {
    if (r.collective != "allreduce" || r.impl != "ring" || r.dtype != "float" || r.in_place || r.mode != "eager" ||
        r.bytes < (64u << 20))
      continue;
    const double predicted = model.predict(r.bytes).busbw_gbps;
    EXPECT_NEAR(r.busbw_gbps / predicted, 1.0, 0.15) << r.bytes;
    EXPECT_LE(r.busbw_gbps, predicted * 1.02) << "the model is a ceiling: " << r.bytes;
    ++compared;
  }
  EXPECT_EQ(compared, 7);
}

// Two ranks over one 100 GB/s link each way, no latency: the kernel terms by hand.
SystemTopology two_ranks(double latency_us) {
  return parse_topology(fmt::format("name: two\nnodes: 1\nnode:\n  ranks: 2\n  fabric: nvlink_mesh\n"
                                    "  gpu_link: {{bandwidth_gbps: 100, latency_us: {}}}\n",
                                    latency_us),
                        "two");
}
constexpr double kMiB = 1 << 20;
constexpr double kUsPerByteAt100 = 1 / 100e3;  // us per byte at 100 GB/s

TEST(ModelKernel, TreeWithOneSlotPerChannelNeverFillsItsPipeline) {
  // 2 trees x 32 channels of 1 MiB slots, local copies at 1000 GB/s, no block limit.
  const KernelPipeline k{32, kMiB, 0, 1000, true};
  const CollectiveModel m(two_ranks(0), Collective::allreduce, "tree", k);
  // 64 MiB: each tree's 32 MiB is one slot per channel: up, then down (each direction carries
  // the other tree's half alone), then the leaf's copy out of its down FIFO.
  const double half = 32 * kMiB;
  EXPECT_NEAR(m.predict(64ull << 20).time_us, 2 * half * kUsPerByteAt100 + half / 1000e3, 1e-6);
  // 1 GiB: 16 slots per channel; 15 rounds carry an up and a down slot each way, the first and
  // the last one of them.
  EXPECT_NEAR(m.predict(1ull << 30).time_us, (1 + 2 * 15 + 1) * half * kUsPerByteAt100 + half / 1000e3, 1e-6);
  // Blocks of 2 GB/s: one tree's 32 channels alone on a direction move 64 GB/s, below the link.
  const CollectiveModel capped(two_ranks(0), Collective::allreduce, "tree", KernelPipeline{32, kMiB, 2, 1000, true});
  EXPECT_NEAR(capped.predict(64ull << 20).time_us, 2 * half / 64e3 + half / 1000e3, 1e-6);
}

TEST(ModelKernel, ATreeFullOfSlotsRunsAsTheSchedulesPipelineAndGrowsWithSize) {
  // 8 ranks: 3 levels, 6 stages. With 1024 slots per channel the fill and drain are small.
  const SystemTopology t = preset("h200-8gpu-nvswitch");
  const KernelPipeline k{32, 64 * 1024, 0, 1e6, true};
  const CollectiveModel kernel(t, Collective::allreduce, "tree", k);
  const double alone = busbw(t, Collective::allreduce, "tree", 4ull << 30);
  EXPECT_NEAR(kernel.predict(4ull << 30).busbw_gbps / alone, 1.0, 0.03);
  double last = 0;
  for (std::uint64_t bytes = 1 << 10; bytes <= (4ull << 30); bytes *= 4) {
    const double time = kernel.predict(bytes).time_us;
    EXPECT_GT(time, last) << bytes;
    last = time;
  }
}

TEST(ModelKernel, RingWaitsForItsPeerEveryLoopAndCopiesItsLastSlotLocally) {
  const KernelPipeline k{4, kMiB, 0, 1000, true};  // 4 channels: 4 MiB per loop
  const CollectiveModel m(two_ranks(2), Collective::allreduce, "ring", k);
  // 64 MiB: each rank's 32 MiB chunk in 8 loops of send (waits for nobody), reduce-send (waits 2
  // us for the peer's send, then the link) and copy (waits for the peer's reduce-send, then local).
  const double chunk = 32 * kMiB, loops = 8;
  EXPECT_NEAR(m.predict(64ull << 20).time_us,
              2 * chunk * kUsPerByteAt100 + loops * 2 + loops * 2 + chunk / 1000e3, 1e-6);
}

TEST(ModelKernel, BlocksCapAFlowAndBruckCopiesItsPieceOutOfPlace) {
  KernelPipeline k{8, 0, 5, 1000, true};  // 8 blocks of 5 GB/s: 40 GB/s, below the link
  const std::uint64_t s = 64ull << 20;
  const double piece = 32 * kMiB;
  EXPECT_NEAR(CollectiveModel(two_ranks(0), Collective::allgather, "tree", k).predict(s).time_us, piece / 40e3, 1e-6);
  k.in_place = false;
  EXPECT_NEAR(CollectiveModel(two_ranks(0), Collective::allgather, "tree", k).predict(s).time_us,
              piece / 40e3 + piece / 1000e3, 1e-6);
  k.local_copy_gbps = 0;
  EXPECT_THROW(CollectiveModel(two_ranks(0), Collective::allgather, "tree", k), Error);
}

// About 0.6 s of CPU on the project's 2-core machines; the bound leaves room for their slow
// phases (the same work several times slower for a while). Sanitized builds are not timed.
constexpr double kSweepCpuSecondsBound = 3.0;

TEST(Model, FourThousandGpuSweepTakesSecondsAtMost) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "not timed under AddressSanitizer, which slows it several-fold";
#endif
  SystemTopology cluster = preset("multinode-8gpu-8ndr");
  cluster.nodes = 512;  // 4096 GPUs
  const std::clock_t start = std::clock();
  for (const char* algo : {"ring", "hier", "nccl-tree"}) {
    const CollectiveModel m(cluster, Collective::allreduce, algo);
    for (std::uint64_t bytes = 8; bytes <= (16ull << 30); bytes *= 2) ASSERT_GT(m.predict(bytes).time_us, 0);
  }
  EXPECT_LT(static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC, kSweepCpuSecondsBound);
}

TEST(Model, UnsupportedCasesSayWhy) {
  const SystemTopology t = preset("h200x2-nv18");
  EXPECT_NE(CollectiveModel(t, Collective::allgather, "oneshot").predict(1024).unsupported.find("allreduce only"),
            std::string::npos);
  EXPECT_NE(CollectiveModel(t, Collective::broadcast, "ring").predict(1024).unsupported.find("not broadcast"),
            std::string::npos);
  EXPECT_THROW(CollectiveModel(t, Collective::allreduce, "butterfly"), Error);
}

}  // namespace
}  // namespace ccbench
