// Emulated nodes (topologies/layout), the per-pair GPU transport plan (transports/gpu_paths) and
// NCCL path pinning (transports/nccl_path): pure parts, no GPU needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "collectives/implementation.h"
#include "collectives/schedules/ring.h"
#include "core/build_config.h"
#include "core/error.h"
#include "topologies/layout.h"
#include "transports/gpu/gpu_paths.h"
#include "transports/ib/ib_transport.h"
#include "transports/nccl_path.h"

namespace ccbench {
namespace {

RankLayout one_host(int rank, int n) { return RankLayout::from_hosts(rank, std::vector<std::string>(n, "h")); }
const PeerAccess kAllAccess = [](int, int) { return true; };
const PeerAccess kNoAccess = [](int, int) { return false; };
// Why ib cannot run, as ib_unavailable_reason() says it on a host without a device.
const std::optional<std::string> kNoIb = std::string("no RDMA device: /sys/class/infiniband does not exist");

// The blocks' parts used by every GPU kernel: contiguous, aligned, covering [0, total) once.
TEST(BlockRange, PartsCoverTheRangeOnceAligned) {
  for (std::size_t total : {0ul, 1ul, 7ul, 16ul, 1000ul, 4099ul})
    for (int parts : {1, 3, 8, 128})
      for (std::size_t align : {1ul, 4ul, 16ul}) {
        std::size_t next = 0;
        for (int b = 0; b < parts; ++b) {
          const schedule::Piece p = schedule::block_range(total, parts, b, align);
          if (p.count == 0) continue;
          EXPECT_EQ(p.offset, next) << total << " " << parts << " " << b;
          EXPECT_EQ(p.offset % align, 0u);
          next = p.offset + p.count;
        }
        EXPECT_EQ(next, total) << total << " " << parts << " " << align;
      }
}

TEST(RingOps, WhatEachStepDoes) {
  using schedule::RingOp;
  EXPECT_FALSE(schedule::ring_op_receives(RingOp::send));
  EXPECT_FALSE(schedule::ring_op_receives(RingOp::copy_send));
  EXPECT_TRUE(schedule::ring_op_receives(RingOp::recv_reduce_send));
  EXPECT_FALSE(schedule::ring_op_sends(RingOp::recv));
  EXPECT_FALSE(schedule::ring_op_sends(RingOp::recv_reduce_copy));
  EXPECT_TRUE(schedule::ring_op_sends(RingOp::recv_copy_send));
  EXPECT_TRUE(schedule::ring_op_finalizes(RingOp::recv_reduce_copy_send));
  EXPECT_FALSE(schedule::ring_op_finalizes(RingOp::recv_reduce_send));
  EXPECT_FALSE(schedule::ring_op_reads_input(RingOp::recv_copy_send));
  EXPECT_FALSE(schedule::ring_op_writes_output(RingOp::recv_reduce_send));
}

TEST(EmulatedNodes, SplitsEachNodeInRankOrder) {
  RankLayout l = one_host(3, 4);
  l.emulate_nodes(2);
  EXPECT_EQ(l.nodes, 2);
  EXPECT_EQ(l.node_of, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(l.local_rank_of, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_TRUE(l.emulated);
  EXPECT_EQ(l.hosts, 1);
  EXPECT_EQ(l.host_local_rank(), 3);  // GPU choice follows the host, not the emulated node
  EXPECT_EQ(l.host_ranks(), 4);
}

TEST(EmulatedNodes, UnevenSplitAndTwoHosts) {
  RankLayout l = RankLayout::from_hosts(0, {"a", "a", "a", "b", "b", "b"});
  l.emulate_nodes(3);
  EXPECT_EQ(l.nodes, 6);
  EXPECT_EQ(l.hosts, 2);
  RankLayout u = one_host(0, 5);
  u.emulate_nodes(2);
  EXPECT_EQ(u.node_of, (std::vector<int>{0, 0, 0, 1, 1}));
}

TEST(EmulatedNodes, BadCountsAreUsageErrors) {
  RankLayout l = one_host(0, 2);
  try {
    l.emulate_nodes(3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("--emulate-nodes 3: expected 1 to 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(l.emulate_nodes(0), Error);
  l.emulate_nodes(1);
  EXPECT_FALSE(l.emulated);
}

TEST(EmulatedNodes, HostIdsSplitOneHost) {
  const RankLayout l = RankLayout::from_hosts(1, {"h", "h", "h"}, {"x", "y", "x"});
  EXPECT_EQ(l.nodes, 2);
  EXPECT_TRUE(l.same_node(0, 2));
  EXPECT_FALSE(l.same_node(0, 1));
  EXPECT_EQ(l.hosts, 1);
  const RankLayout plain = RankLayout::from_hosts(0, {"h", "h"}, {"", ""});
  EXPECT_EQ(plain.nodes, 1);
  EXPECT_FALSE(plain.emulated);
}

// GPUs are known by bus id: one visible GPU per rank (Slurm's binding: every rank's ordinal is 0)
// is no sharing when the bus ids differ; ranks of one bus id share, on one host only.
TEST(SameGpu, BusIdsDecideNotOrdinals) {
  RankLayout l = one_host(0, 4);
  l.gpu_of = {"0000:19:00.0", "0000:3b:00.0", "0000:19:00.0", "0000:5d:00.0"};
  EXPECT_FALSE(l.same_gpu(0, 1, 1));  // one visible GPU each, different GPUs
  EXPECT_TRUE(l.same_gpu(0, 2, 1));
  EXPECT_EQ(l.first_rank_sharing_a_gpu(1), 2);
  l.gpu_of = {"0000:19:00.0", "0000:3b:00.0", "0000:5d:00.0", "0000:7f:00.0"};
  EXPECT_EQ(l.first_rank_sharing_a_gpu(1), -1);
  RankLayout two = RankLayout::from_hosts(0, {"a", "b"});
  two.gpu_of = {"0000:19:00.0", "0000:19:00.0"};  // the same bus id on two hosts: two GPUs
  EXPECT_FALSE(two.same_gpu(0, 1, 1));
  // Without bus ids (not gathered): the ordinal the harness assigns, host rank modulo GPUs.
  const RankLayout plain = one_host(0, 3);
  EXPECT_TRUE(plain.same_gpu(0, 2, 2));
  EXPECT_FALSE(plain.same_gpu(0, 1, 2));
  EXPECT_EQ(plain.first_rank_sharing_a_gpu(2), 2);
  // Ranks sharing a GPU on different emulated nodes do not share it within a node (NCCL's rule).
  RankLayout emulated = one_host(0, 2);
  emulated.gpu_of = {"0000:19:00.0", "0000:19:00.0"};
  EXPECT_EQ(emulated.first_rank_sharing_a_gpu(1), 1);
  emulated.emulate_nodes(2);
  EXPECT_EQ(emulated.first_rank_sharing_a_gpu(1), -1);
  // A sub-group keeps its members' GPUs.
  EXPECT_EQ(l.subset({1, 3}).gpu_of, (std::vector<std::string>{"0000:3b:00.0", "0000:7f:00.0"}));
}

// NCCL refuses two ranks of one node on one GPU at communicator set-up; ccbench says so before
// NCCL is called (Implementation::refuses), naming the way out, and lets it run across emulated
// nodes. Without NCCL in the build there is nothing to refuse.
TEST(SameGpu, NcclRefusesRanksOfANodeOnOneGpuBeforeSetUp) {
  const ImplInfo* nccl = find_implementation(ImplId::nccl, Device::gpu);
  ASSERT_NE(nccl, nullptr);
  if (!CCBENCH_HAVE_NCCL) GTEST_SKIP() << "NCCL is not built in";
  auto impl = nccl->make();
  RankLayout l = one_host(0, 2);
  l.gpu_of = {"0000:19:00.0", "0000:19:00.0"};
  ImplContext ctx;
  ctx.layout = &l;
  ctx.device = Device::gpu;
  const auto why = impl->refuses(ctx);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("ranks 0 and 1 of node"), std::string::npos) << *why;
  EXPECT_NE(why->find("--emulate-nodes"), std::string::npos) << *why;
  l.emulate_nodes(2);
  EXPECT_FALSE(impl->refuses(ctx).has_value());
  RankLayout own = one_host(0, 2);
  own.gpu_of = {"0000:19:00.0", "0000:3b:00.0"};
  ctx.layout = &own;
  EXPECT_FALSE(impl->refuses(ctx).has_value());
}

TEST(GpuPaths, AutoPrefersP2pThenHost) {
  const RankLayout l = one_host(0, 3);
  GpuPaths g = plan_gpu_paths(l, "auto", kAllAccess, kNoIb);
  EXPECT_TRUE(g.refused.empty());
  EXPECT_EQ(g.label, "p2p");
  EXPECT_EQ(g.of[0][1], "p2p");
  // Peer access only between ranks 0 and 1: the others go through host memory.
  g = plan_gpu_paths(l, "auto", [](int a, int b) { return a + b == 1; }, kNoIb);
  EXPECT_EQ(g.of[0][1], "p2p");
  EXPECT_EQ(g.of[1][2], "host");
  EXPECT_EQ(g.label, "p2p+host");
  g = plan_gpu_paths(l, "auto", kNoAccess, kNoIb);
  EXPECT_EQ(g.label, "host");
}

TEST(GpuPaths, ForcedTransportsRefuseWithTheReason) {
  const RankLayout l = one_host(0, 2);
  GpuPaths g = plan_gpu_paths(l, "p2p", kNoAccess, kNoIb);
  EXPECT_NE(g.refused.find("ranks 0 and 1 have no peer access"), std::string::npos) << g.refused;
  g = plan_gpu_paths(l, "host", kAllAccess, kNoIb);
  EXPECT_TRUE(g.refused.empty());
  EXPECT_EQ(g.label, "host");
  EXPECT_EQ(plan_gpu_paths(l, "cuda_ipc", kAllAccess, kNoIb).label, "p2p");
  g = plan_gpu_paths(l, "tcp", kAllAccess, kNoIb);  // forced: the network path even within a node
  EXPECT_TRUE(g.refused.empty());
  EXPECT_EQ(g.label, "net/tcp");
  EXPECT_EQ(g.of[1][0], "net");
  g = plan_gpu_paths(l, "ib", kAllAccess, kNoIb);  // no RDMA port: refused with the reason
  EXPECT_EQ(g.refused, "--transport ib: " + *kNoIb);
  g = plan_gpu_paths(l, "shm", kAllAccess, kNoIb);
  EXPECT_NE(g.refused.find("valid for GPU ranks: auto, p2p, host"), std::string::npos) << g.refused;
}

TEST(GpuPaths, EmulatedNodesRefuseP2pAndHost) {
  RankLayout l = one_host(0, 2);
  l.emulate_nodes(2);
  GpuPaths g = plan_gpu_paths(l, "p2p", kAllAccess, kNoIb);
  EXPECT_NE(g.refused.find("different nodes (0 and 1, emulated): p2p maps peer GPU memory within one node"),
            std::string::npos)
      << g.refused;
  g = plan_gpu_paths(l, "host", kAllAccess, kNoIb);
  EXPECT_NE(g.refused.find("host shares pinned memory within one node"), std::string::npos) << g.refused;
  g = plan_gpu_paths(l, "auto", kAllAccess, kNoIb);
  EXPECT_TRUE(g.refused.empty());
  EXPECT_EQ(g.label, "net/tcp");
  // 2 x 2: p2p inside each emulated node, net between them.
  RankLayout four = one_host(0, 4);
  four.emulate_nodes(2);
  g = plan_gpu_paths(four, "auto", kAllAccess, kNoIb);
  EXPECT_EQ(g.of[0][1], "p2p");
  EXPECT_EQ(g.of[1][2], "net");
  EXPECT_EQ(g.label, "p2p+net/tcp");
}

// ib: net pairs over RDMA verbs where every rank has an active port.
TEST(GpuPaths, IbCarriesNetPairs) {
  const RankLayout l = one_host(0, 2);
  GpuPaths g = plan_gpu_paths(l, "ib", kAllAccess, std::nullopt);  // forced: every pair, within a node too
  EXPECT_TRUE(g.refused.empty()) << g.refused;
  EXPECT_EQ(g.label, "net/ib");
  EXPECT_EQ(g.net_backend, "ib");
  EXPECT_EQ(g.of[0][1], "net");
  EXPECT_EQ(g.of[1][0], "net");
  // tcp and net stay on tcp even where ib could run.
  g = plan_gpu_paths(l, "tcp", kAllAccess, std::nullopt);
  EXPECT_EQ(g.label, "net/tcp");
  EXPECT_EQ(g.net_backend, "tcp");
  EXPECT_EQ(plan_gpu_paths(l, "net", kAllAccess, std::nullopt).net_backend, "tcp");
  // auto within a node never uses the network, so it says nothing about ib.
  g = plan_gpu_paths(l, "auto", kAllAccess, kNoIb);
  EXPECT_EQ(g.label, "p2p");
  EXPECT_EQ(ib_skipped_note(l, "auto", kNoIb), std::nullopt);
}

// ofi: net pairs over libfabric, forced only (auto never takes it, whether or not ib can run).
TEST(GpuPaths, OfiCarriesNetPairsWhenAskedFor) {
  const RankLayout l = one_host(0, 2);
  GpuPaths g = plan_gpu_paths(l, "ofi", kAllAccess, kNoIb);
  EXPECT_TRUE(g.refused.empty()) << g.refused;
  EXPECT_EQ(g.label, "net/ofi");
  EXPECT_EQ(g.net_backend, "ofi");
  EXPECT_EQ(g.of[0][1], "net");
  EXPECT_EQ(g.of[1][0], "net");
  RankLayout two = one_host(0, 2);
  two.emulate_nodes(2);
  EXPECT_EQ(plan_gpu_paths(two, "auto", kAllAccess, kNoIb).label, "net/tcp");
  EXPECT_EQ(plan_gpu_paths(two, "auto", kAllAccess, std::nullopt).label, "net/ib");
}

TEST(GpuPaths, AutoAcrossNodesTakesIbWhereEveryRankHasAPort) {
  RankLayout four = one_host(0, 4);
  four.emulate_nodes(2);
  GpuPaths g = plan_gpu_paths(four, "auto", kAllAccess, std::nullopt);
  EXPECT_EQ(g.of[0][1], "p2p");
  EXPECT_EQ(g.of[1][2], "net");
  EXPECT_EQ(g.label, "p2p+net/ib");
  EXPECT_EQ(ib_skipped_note(four, "auto", std::nullopt), std::nullopt);
  // No active port: tcp, and the note says why ib was skipped.
  g = plan_gpu_paths(four, "auto", kAllAccess, kNoIb);
  EXPECT_EQ(g.label, "p2p+net/tcp");
  EXPECT_EQ(g.net_backend, "tcp");
  EXPECT_EQ(ib_skipped_note(four, "auto", kNoIb), "net pairs run over tcp: ib skipped: " + *kNoIb);
  EXPECT_EQ(ib_skipped_note(four, "tcp", kNoIb), std::nullopt);  // chosen, not skipped
}

TEST(NcclPath, TransportsNamedInItsDebugLog) {
  const std::string log =
      "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "h:1:2 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [receive] via NET/Socket/0\n"
      "h:1:2 [0] NCCL INFO Channel 02/0 : 0[0] -> 1[1] via SHM/direct/direct\n"
      "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n";
  EXPECT_EQ(nccl_transports_in_log(log), "P2P+NET/Socket+SHM");
  EXPECT_EQ(nccl_transports_in_log("NCCL INFO Init COMPLETE\n"), "");
  const std::string ib =
      "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA\n"
      "h:1:2 [0] NCCL INFO Channel 01/0 : 1[1] -> 0[0] [receive] via NET/IB/1\n";
  EXPECT_EQ(nccl_transports_in_log(ib), "NET/IB/GDRDMA+NET/IB");
  EXPECT_STREQ(nccl_gdr_level(true), "SYS");
  EXPECT_STREQ(nccl_gdr_level(false), "LOC");
}

TEST(NcclPath, PinsTheSettingsOfEachPath) {
  const RankLayout l = one_host(0, 2);
  unsetenv("NCCL_P2P_DISABLE");
  NcclPinning p = pin_nccl_path("host", l);
  EXPECT_EQ(p.pinned, "shm");
  EXPECT_STREQ(std::getenv("NCCL_P2P_DISABLE"), "1");
  unsetenv("NCCL_SOCKET_IFNAME");
  p = pin_nccl_path("tcp", l);
  EXPECT_EQ(p.pinned, "net/socket");
  EXPECT_STREQ(std::getenv("NCCL_SHM_DISABLE"), "1");
  EXPECT_STREQ(std::getenv("NCCL_NET"), "Socket");
  EXPECT_STREQ(std::getenv("NCCL_SOCKET_IFNAME"), "lo");  // one host: loopback
  RankLayout e = one_host(1, 2);
  e.emulate_nodes(2);
  unsetenv("CCBENCH_HOSTID");
  p = pin_nccl_path("auto", e);
  EXPECT_EQ(p.pinned, "hostid");
  EXPECT_STREQ(std::getenv("NCCL_HOSTID"), "ccbench-node-1");
  for (const char* v : {"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET", "NCCL_SOCKET_IFNAME", "NCCL_HOSTID",
                        "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"})
    unsetenv(v);
}

// --transport ofi: NCCL over the aws-ofi-nccl plugin where the probe finds one whose net is
// Libfabric (NCCL_NET names it; the user's NCCL_NET_PLUGIN is kept), else nothing pinned and
// NCCL's rows skipped with what was tried.
TEST(NcclPath, OfiPinsTheLibfabricPluginOrSaysWhatWasTried) {
  const RankLayout l = one_host(0, 2);
  setenv("NCCL_NET_PLUGIN", CCBENCH_FAKE_OFI_PLUGIN, 1);
  std::string why;
  const std::optional<OfiNcclPlugin> found = find_ofi_nccl_plugin(&why);
  ASSERT_TRUE(found) << why;
  EXPECT_EQ(found->net, "Libfabric");
  EXPECT_EQ(found->setting, "");  // the user's NCCL_NET_PLUGIN stays as given
  NcclPinning p = pin_nccl_path("ofi", l);
  EXPECT_EQ(p.pinned, "net/ofi");
  EXPECT_EQ(p.refused, "");
  EXPECT_EQ(nccl_path_refusal(), std::nullopt);
  EXPECT_STREQ(std::getenv("NCCL_NET"), "Libfabric");
  EXPECT_STREQ(std::getenv("NCCL_NET_PLUGIN"), CCBENCH_FAKE_OFI_PLUGIN);
  EXPECT_STREQ(std::getenv("NCCL_SHM_DISABLE"), "1");
  for (const char* v : {"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS",
                        "NCCL_DEBUG_FILE"})
    unsetenv(v);

  setenv("NCCL_NET_PLUGIN", CCBENCH_FAKE_OTHER_PLUGIN, 1);
  p = pin_nccl_path("ofi", l);
  EXPECT_EQ(p.pinned, "");
  EXPECT_NE(p.refused.find(fmt::format("--transport ofi: no aws-ofi-nccl net plugin for NCCL (tried {} (its net is "
                                       "Elsewhere)", CCBENCH_FAKE_OTHER_PLUGIN)),
            std::string::npos) << p.refused;
  EXPECT_EQ(nccl_path_refusal(), p.refused);
  EXPECT_EQ(std::getenv("NCCL_NET"), nullptr);  // nothing pinned

  setenv("NCCL_NET_PLUGIN", "no-such-plugin", 1);
  p = pin_nccl_path("ofi", l);
  EXPECT_NE(p.refused.find("tried no-such-plugin (not found), libnccl-net-no-such-plugin.so (not found)"),
            std::string::npos) << p.refused;
  unsetenv("NCCL_NET_PLUGIN");
  p = pin_nccl_path("auto", l);  // another path clears the refusal
  EXPECT_EQ(nccl_path_refusal(), std::nullopt);
}

// GPU ranks with --transport ib and no usable RDMA port: exit code 3 with ib_unavailable_reason()
// (no device, or a build without ibverbs), before NCCL or our kernels start.
TEST(NcclPath, IbWithoutRdmaDeviceIsAPrecondition) {
  const std::optional<std::string> why = ib_unavailable_reason();
  if (!why) GTEST_SKIP() << "this machine has an active RDMA port";
  try {
    pin_nccl_path("ib", one_host(0, 2));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::precondition);
    EXPECT_EQ(std::string(e.what()), "--transport ib: host h: " + *why + "; use net or tcp for sockets");
  }
  EXPECT_EQ(std::getenv("NCCL_NET"), nullptr);  // nothing pinned
}

}  // namespace
}  // namespace ccbench
