// `ccbench run --model`: which rows get a prediction, with which link figure, and why not.
#include <gtest/gtest.h>

#include "core/error.h"
#include "harness/links/links.h"
#include "harness/model/run_model.h"
#include "harness/model/model.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

RunRecord model_row(const std::string& impl, int nodes, int per_node, std::uint64_t bytes = 64ull << 20) {
  return RecordBuilder().impl(impl).bytes(bytes).ranks(nodes * per_node, per_node, nodes).busbw(1.0);
}

TEST(RunModel, RingRowsArePredictedOnTheFilesNodeScaledToTheRow) {
  const RunModel m = load_run_model("cpu-node");  // 8 ranks in the file, 10 GB/s links
  const RowPrediction two = predict_row(m, model_row("ring", 1, 2), {});
  ASSERT_TRUE(two.busbw_gbps) << two.reason;
  SystemTopology t = m.system;
  t.node.ranks = 2;
  EXPECT_DOUBLE_EQ(*two.busbw_gbps, CollectiveModel(t, Collective::allreduce, "ring").predict(64ull << 20).busbw_gbps);
  EXPECT_DOUBLE_EQ(*two.link_gbps, 10);
  EXPECT_FALSE(two.calibrated);
}

TEST(RunModel, AMeasuredCeilingReplacesTheFilesLinkInsideOneNode) {
  const RunModel m = load_run_model("cpu-node");
  const std::vector<LinkCeiling> ceilings = {{"shm", 3.0, 4.0}};  // per direction, both busy: 2 GB/s
  const RowPrediction p = predict_row(m, model_row("ring", 1, 2), ceilings);
  ASSERT_TRUE(p.busbw_gbps) << p.reason;
  EXPECT_TRUE(p.calibrated);
  EXPECT_DOUBLE_EQ(*p.link_gbps, 2.0);
  EXPECT_LT(*p.busbw_gbps, 2.0 + 1e-9);  // the asymptote is the link
  EXPECT_GT(*p.busbw_gbps, 1.5);         // 64 MiB is close to it
  // Another transport's ceiling does not apply.
  EXPECT_FALSE(predict_row(m, model_row("ring", 1, 2), {{"tcp", 3.0, 4.0}}).calibrated);
}

TEST(RunModel, NcclIsItsFasterAlgorithm) {
  const RunModel m = load_run_model("h200x2-nv18");
  RunRecord r = model_row("nccl", 1, 2, 8);
  r.device = "gpu";
  const RowPrediction p = predict_row(m, r, {});
  ASSERT_TRUE(p.time_us) << p.reason;
  SystemTopology t = m.system;
  const double ring = CollectiveModel(t, Collective::allreduce, "nccl-ring").predict(8).time_us;
  const double tree = CollectiveModel(t, Collective::allreduce, "nccl-tree").predict(8).time_us;
  EXPECT_DOUBLE_EQ(*p.time_us, std::min(ring, tree));
}

TEST(RunModel, CpuHierIsPredictedByTheLeaderSchemeAndGpuHierByTheTwoLevelOne) {
  SystemTopology t = parse_topology("name: c\nnodes: 2\nnode:\n  ranks: 2\n  fabric: host\n"
                                    "  gpu_link: {bandwidth_gbps: 10, latency_us: 1}\n  nics: 1\n"
                                    "  nic: {bandwidth_gbps: 1, latency_us: 2}\n",
                                    "c");
  const RunModel m{t, "c.yaml"};
  const RowPrediction cpu = predict_row(m, model_row("hier", 2, 2), {});
  ASSERT_TRUE(cpu.busbw_gbps) << cpu.reason;
  EXPECT_EQ(cpu.reason, "");
  EXPECT_DOUBLE_EQ(*cpu.time_us, CollectiveModel(t, Collective::allreduce, "hier-leader").predict(64ull << 20).time_us);
  RunRecord gpu_row = model_row("hier", 2, 2);
  gpu_row.device = "gpu";
  const RowPrediction gpu = predict_row(m, gpu_row, {});
  ASSERT_TRUE(gpu.time_us) << gpu.reason;
  EXPECT_DOUBLE_EQ(*gpu.time_us, CollectiveModel(t, Collective::allreduce, "hier").predict(64ull << 20).time_us);
  EXPECT_GT(*cpu.time_us, *gpu.time_us);
}

TEST(RunModel, GpuHierIsTheModelsHier) {
  const RunModel m = load_run_model("multinode-8gpu-8ndr");
  RunRecord r = model_row("hier", 2, 8);
  r.device = "gpu";
  const RowPrediction p = predict_row(m, r, {});
  ASSERT_TRUE(p.time_us) << p.reason;
  SystemTopology t = m.system;
  t.nodes = 2;
  EXPECT_DOUBLE_EQ(*p.time_us, CollectiveModel(t, Collective::allreduce, "hier").predict(64ull << 20).time_us);
}

TEST(RunModel, AcrossEmulatedNodesTheMeasuredTcpCeilingIsEachNodesNic) {
  const RunModel m = load_run_model("cpu-node");  // no NICs in the file
  RunRecord r = model_row("ring", 2, 1);
  r.transport = "tcp";
  const std::vector<LinkCeiling> ceilings = {{"tcp", 3.0, 4.0}};  // 2 GB/s per direction, both busy
  const RowPrediction p = predict_row(m, r, ceilings);
  ASSERT_TRUE(p.busbw_gbps) << p.reason;
  EXPECT_TRUE(p.calibrated);
  EXPECT_DOUBLE_EQ(*p.link_gbps, 2.0);
  SystemTopology t = m.system;
  t.nodes = 2;
  t.node.ranks = 1;
  t.node.nics = 1;
  t.node.nic = {2.0, t.node.gpu_link.latency_us};
  EXPECT_DOUBLE_EQ(*p.busbw_gbps, CollectiveModel(t, Collective::allreduce, "ring").predict(64ull << 20).busbw_gbps);
  // A node kind with NICs keeps their number; each gets the measured figure.
  const RunModel nics{parse_topology("name: c\nnodes: 1\nnode:\n  ranks: 2\n  fabric: host\n"
                                     "  gpu_link: {bandwidth_gbps: 10, latency_us: 1}\n  nics: 2\n"
                                     "  nic: {bandwidth_gbps: 50, latency_us: 3}\n",
                                     "c"),
                      "c.yaml"};
  RunRecord four = model_row("ring", 2, 2);
  four.transport = "tcp";
  t = nics.system;
  t.nodes = 2;
  t.node.nic.bandwidth_gbps = 2.0;
  EXPECT_DOUBLE_EQ(*predict_row(nics, four, ceilings).busbw_gbps,
                   CollectiveModel(t, Collective::allreduce, "ring").predict(64ull << 20).busbw_gbps);
  // The GPU net transport's rows take the net/tcp ceiling.
  RunRecord gpu = r;
  gpu.device = "gpu";
  gpu.transport = "net/tcp";
  EXPECT_FALSE(predict_row(m, gpu, ceilings).busbw_gbps);
  const RowPrediction g = predict_row(m, gpu, {{"net/tcp", 30.0, 36.0}});
  ASSERT_TRUE(g.busbw_gbps) << g.reason;
  EXPECT_DOUBLE_EQ(*g.link_gbps, 18.0);
  // Our kernels over net (with the H200 kernel figures): a block's FIFO is one of the measured tcp
  // streams, 18 / 8 GB/s each.
  const RunModel h200 = load_run_model("h200x2-nv18");
  RunModel kernels = m;
  kernels.system.node.kernels = h200.system.node.kernels;
  gpu.algorithm = "ring 8ch";
  const double ring = *predict_row(kernels, gpu, {{"net/tcp", 30.0, 36.0}}).busbw_gbps;
  gpu.impl = "tree";
  gpu.algorithm = "double tree 2x2ch";  // each way: one tree's 2 up and the other's 2 down
  const double tree = *predict_row(kernels, gpu, {{"net/tcp", 30.0, 36.0}}).busbw_gbps;
  EXPECT_LT(ring, 18.0);
  EXPECT_GT(ring, 18.0 * 0.8);
  EXPECT_LT(tree, 4 * 18.0 / 8);
  EXPECT_GT(tree, 4 * 18.0 / 8 * 0.8);
  // With the streams measured as many as the tree drives (4: 12 GB/s per direction), its blocks
  // get their share of that instead; the ring keeps the 8-stream figure.
  const std::vector<LinkCeiling> both = {{"net/tcp", 30.0, 36.0}, {net_tcp_streams_label(4), 20.0, 24.0}};
  const double tree4 = *predict_row(kernels, gpu, both).busbw_gbps;
  EXPECT_LT(tree4, 12.0);
  EXPECT_GT(tree4, 12.0 * 0.8);
  gpu.impl = "ring";
  gpu.algorithm = "ring 8ch";
  EXPECT_DOUBLE_EQ(*predict_row(kernels, gpu, both).busbw_gbps, ring);
}

TEST(RunModel, KernelTermsComeFromTheTopologyFile) {
  RunRecord r = model_row("ring", 1, 2);
  r.device = "gpu";
  r.transport = "p2p";
  r.algorithm = "ring 4ch";  // 4 blocks: 40.8 GB/s at most with the H200 figures
  RunModel m = load_run_model("h200x2-nv18");
  EXPECT_LT(*predict_row(m, r, {}).busbw_gbps, 4 * 10.2);
  m.system.node.kernels.block_gbps = 20;  // another GPU's figures move the prediction with them
  EXPECT_GT(*predict_row(m, r, {}).busbw_gbps, 4 * 10.2);
  EXPECT_LT(*predict_row(m, r, {}).busbw_gbps, 4 * 20.0);
  m.system.node.kernels = {};  // none in the file: the schedule alone
  SystemTopology t = m.system;
  EXPECT_DOUBLE_EQ(*predict_row(m, r, {}).busbw_gbps,
                   CollectiveModel(t, Collective::allreduce, "ring").predict(64ull << 20).busbw_gbps);
}

TEST(RunModel, GpuRingAndTreeRowsArePredictedWithTheChannelsTheyRan) {
  const RunModel m = load_run_model("h200x2-nv18");
  RunRecord r = model_row("tree", 1, 2);
  r.device = "gpu";
  r.transport = "p2p";
  r.algorithm = "double tree 2x32ch";
  const double with32 = *predict_row(m, r, {}).busbw_gbps;
  r.algorithm = "double tree 2x2ch";  // 2 blocks per flow of 10.2 GB/s, each way 2 trees' flows
  EXPECT_LT(*predict_row(m, r, {}).busbw_gbps, 2 * 2 * 326.0 / 32);
  r.algorithm = "something else";  // not our kernel's words: the schedule alone
  const double alone = *predict_row(m, r, {}).busbw_gbps;
  SystemTopology t = m.system;
  EXPECT_DOUBLE_EQ(alone, CollectiveModel(t, Collective::allreduce, "tree").predict(64ull << 20).busbw_gbps);
  EXPECT_LT(with32, alone * 0.85);  // one slot per channel at 64 MiB: the pipeline never fills
}

TEST(RunModel, GpuRowsOfRanksSharingAGpuGetNoPredictionAndSayWhy) {
  const RunModel m = load_run_model("h200x2-nv18");
  RunRecord r = model_row("ring", 1, 2);
  r.device = "gpu";
  r.transport = "p2p";
  auto run_with = [&](const char* second_gpu) {
    const Json context = {{"ranks_detail",
                           {{{"rank", 0}, {"host", "vm"}, {"device", "GPU 0: NVIDIA H200 (0000:00:06.0, 150 GB, 132 SMs)"}},
                            {{"rank", 1}, {"host", "vm"}, {"device", second_gpu}}}}};
    RunRecord out = r;
    set_model_columns(out, m, {}, shared_gpu_reason(context));
    return to_json(out);
  };
  const Json own = run_with("GPU 1: NVIDIA H200 (0000:00:07.0, 150 GB, 132 SMs)");
  EXPECT_TRUE(own["predicted_busbw_gbps"].is_number()) << own.dump();
  const Json shared = run_with("GPU 0: NVIDIA H200 (0000:00:06.0, 150 GB, 132 SMs)");
  EXPECT_TRUE(shared["predicted_busbw_gbps"].is_null());
  EXPECT_EQ(shared["model_reason"], "ranks 0 and 1 share vm GPU 0: NVIDIA H200 (--share-gpus): their kernels "
                                    "time-slice the GPU, which the model does not describe");
}

TEST(RunModel, RowsWithoutAPredictionSayWhy) {
  const RunModel m = load_run_model("cpu-node");
  EXPECT_NE(predict_row(m, model_row("mpi", 1, 2), {}).reason.find("no algorithm for impl mpi"), std::string::npos);
  EXPECT_NE(predict_row(m, model_row("ring", 2, 2), {}).reason.find("describes no NICs"), std::string::npos);
  RunRecord uneven = model_row("ring", 2, 2);
  uneven.ranks = 3;
  EXPECT_NE(predict_row(m, uneven, {}).reason.find("same ranks on every node"), std::string::npos);
  RunRecord broadcast = model_row("ring", 1, 2);
  broadcast.collective = "broadcast";
  const RowPrediction b = predict_row(m, broadcast, {});
  EXPECT_FALSE(b.busbw_gbps);
  EXPECT_FALSE(b.reason.empty());
}

TEST(RunModel, AnUnknownTopologyIsAUsageErrorNamingTheOptionAndThePresets) {
  try {
    load_run_model("no-such-system");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("--model no-such-system"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu-node"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ccbench
