// Cluster discovery checks: PCI path classes from sysfs paths and the expected-topology comparison
// on a gathered cluster (a GPU host as NVML reports it, crafted: CI has no GPU).
#include <gtest/gtest.h>

#include "core/error.h"
#include "topologies/discovery.h"
#include "topologies/expect.h"
#include "topologies/pci_paths.h"

namespace ccbench {
namespace {

using Json = nlohmann::ordered_json;

TEST(PciPaths, ClassesFollowTheTree) {
  const std::string root = "/sys/devices/pci0000:00/0000:00:01.0";
  const std::string sw = root + "/0000:01:00.0";  // a PCIe switch's upstream port
  const std::string gpu0 = sw + "/0000:02:00.0/0000:03:00.0", nic0 = sw + "/0000:02:04.0/0000:04:00.0";
  EXPECT_EQ(pci_path_class(gpu0, 0, nic0, 0), "PIX");
  const std::string deep = sw + "/0000:02:08.0/0000:05:00.0/0000:06:00.0/0000:07:00.0";
  EXPECT_EQ(pci_path_class(gpu0, 0, deep, 0), "PXB");
  EXPECT_EQ(pci_path_class(gpu0, 0, "/sys/devices/pci0000:00/0000:00:03.0/0000:09:00.0", 0), "PHB");
  EXPECT_EQ(pci_path_class(gpu0, 0, "/sys/devices/pci0000:40/0000:40:01.0/0000:41:00.0", 0), "NODE");
  EXPECT_EQ(pci_path_class(gpu0, 0, "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", 1), "SYS");
  EXPECT_EQ(pci_path_class("", 0, nic0, 0), "");
  EXPECT_EQ(sysfs_pci_name("00000000:9A:00.0"), "0000:9a:00.0");
}

// One host of two H200 joined by NV18, one NIC, as discover_node() reports it.
Json gpu_host(const std::string& host, int width, int links) {
  Json gpu = {{"index", 0}, {"name", "NVIDIA H200"}, {"pci", "0000:19:00.0"}, {"numa_node", 0},
              {"pcie", {{"gen", 5}, {"gen_max", 5}, {"width", width}, {"width_max", 16}}}, {"nvlinks_active", links}};
  Json gpu1 = gpu;
  gpu1["index"] = 1;
  gpu1["pci"] = "0000:3b:00.0";
  gpu1["pcie"]["width"] = 16;
  gpu1["nvlinks_active"] = 18;
  const std::string nv = links == 18 ? "NV18" : "NV17";
  const Json paths = Json::array({Json::array({"X", nv}), Json::array({nv, "X"})});
  Json nic = {{"name", "mlx5_0"},
              {"ports", Json::array({{{"port", 1}, {"state", "PORT_ACTIVE"}, {"link_layer", "InfiniBand"}, {"rate", "400 Gb/sec (4X NDR)"}}})}};
  Json node = {{"cpu", {{"available", true}, {"packages", 2}, {"cores", 64}, {"hardware_threads", 128}, {"numa_nodes", 2}}},
               {"rdma", {{"available", true}, {"devices", Json::array({nic})}}},
               {"gpus", {{"available", true}, {"gpus", Json::array({gpu, gpu1})}, {"paths", paths}}}};
  return {{"host", host}, {"ranks", Json::array()}, {"node", node}};
}

// The printed block says the NVLink speed in GB/s and an unknown NUMA node in words.
TEST(DescribeNode, GpuLinesInWordsAndUnits) {
  Json host = gpu_host("a", 8, 18);
  Json& gpus = host["node"]["gpus"]["gpus"];
  gpus[0]["nvlink_speed_mbps"] = 26562;  // MB/s per link and direction, as NVML reports it
  gpus[1]["numa_node"] = -1;
  std::string s = describe_node(host["node"]);
  EXPECT_NE(s.find("GPU0 NVIDIA H200  0000:19:00.0  NUMA 0  PCIe Gen5 x8 (BELOW its maximum Gen5 x16)  18 NVLinks "
                   "up, 26.6 GB/s each way per link\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("GPU1 NVIDIA H200  0000:3b:00.0  NUMA unknown  PCIe Gen5 x16  18 NVLinks up\n"), std::string::npos)
      << s;
  EXPECT_NE(s.find("  GPU0           X    NV18\n"), std::string::npos) << s;
  gpus[0]["nvlink_speed_max_mbps"] = 53125;  // one link faster than the slowest: both named
  s = describe_node(host["node"]);
  EXPECT_NE(s.find("18 NVLinks up, 26.6-53.1 GB/s each way per link (NOT all at one speed)\n"), std::string::npos)
      << s;
}

// The kernel's TCP buffers in words: min, default and max of autotuned sockets, and the most a
// program may ask for; a value /proc did not give reads "?", never a made-up number.
TEST(DescribeNode, TcpBuffersInWords) {
  Json node = gpu_host("a", 16, 18)["node"];
  node["tcp"] = {{"tcp_rmem", {4096, 131072, 33554432}},
                 {"tcp_wmem", {4096, 16384, 4194304}},
                 {"rmem_max", 212992},
                 {"wmem_max", nullptr}};
  const std::string s = describe_node(node);
  EXPECT_NE(s.find("tcp buffers (min default max): receive 4096 131072 33554432, send 4096 16384 4194304; asked for at "
                   "most 212992 / ?\n"),
            std::string::npos)
      << s;
  node.erase("tcp");  // a context written before the part existed
  EXPECT_EQ(describe_node(node).find("tcp buffers"), std::string::npos);
}

TEST(ExpectedTopology, AMatchingClusterHasNoDifference) {
  const auto e = parse_expectation("hosts: 2\ngpus_per_host: 2\ngpu_name: H200\nnvlinks_per_gpu: 18\n"
                                   "gpu_paths: NV18\npcie_gen: 5\npcie_width: 16\nnics_per_host: 1\n"
                                   "nic_state: PORT_ACTIVE\nnic_rate: 400 Gb/sec\ncores_per_host: 64\nnuma_nodes: 2\n",
                                   "e.yaml");
  const Json cluster = {{"hosts", Json::array({gpu_host("a", 16, 18), gpu_host("b", 16, 18)})}};
  EXPECT_TRUE(topology_differences(e, cluster).empty());
}

TEST(ExpectedTopology, EveryDifferenceIsNamedWithHostAndDevice) {
  const auto e = parse_expectation("hosts: 2\ngpus_per_host: 2\nnvlinks_per_gpu: 18\ngpu_paths: NV18\n"
                                   "pcie_width: 16\nnic_rate: 400 Gb/sec\n",
                                   "e.yaml");
  Json slow = gpu_host("gpu07", 8, 17);  // a GPU trained down to x8 with one NVLink down
  slow["node"]["rdma"]["devices"][0]["ports"][0]["rate"] = "200 Gb/sec (4X HDR)";
  const auto d = topology_differences(e, {{"hosts", Json::array({gpu_host("gpu06", 16, 18), slow})}});
  ASSERT_EQ(d.size(), 5u) << ::testing::PrintToString(d);
  EXPECT_EQ(d[0], "host gpu07: GPU 0 (0000:19:00.0): 17 NVLink links up, expected 18");
  EXPECT_EQ(d[1], "host gpu07: GPU 0 (0000:19:00.0): PCIe link x8 (max x16), expected x16");
  EXPECT_EQ(d[2], "host gpu07: GPU 0 to GPU 1: NV17, expected NV18");
  EXPECT_EQ(d[3], "host gpu07: GPU 1 to GPU 0: NV17, expected NV18");
  EXPECT_EQ(d[4], "host gpu07: mlx5_0 port 1: rate '200 Gb/sec (4X HDR)', expected '400 Gb/sec'");
  const auto missing = topology_differences(parse_expectation("hosts: 3\n", "e"), {{"hosts", Json::array({gpu_host("a", 16, 18)})}});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0], "1 hosts in the job, expected 3");
}

// A host whose kernel starts sockets with less buffer than expected is named, one whose context
// lacks the setting too; a larger default passes (the keys are a least, not an equality).
TEST(ExpectedTopology, TcpBufferDefaultsAreALeast) {
  const auto e = parse_expectation("min_tcp_rmem_default: 4194304\nmin_tcp_wmem_default: 16384\n", "e.yaml");
  Json tuned = gpu_host("gpu01", 16, 18), stock = gpu_host("gpu02", 16, 18), old = gpu_host("gpu03", 16, 18);
  tuned["node"]["tcp"] = {{"tcp_rmem", {4096, 6291456, 33554432}}, {"tcp_wmem", {4096, 16384, 4194304}}};
  stock["node"]["tcp"] = {{"tcp_rmem", {4096, 131072, 6291456}}, {"tcp_wmem", {4096, 16384, 4194304}}};
  const auto d = topology_differences(e, {{"hosts", Json::array({tuned, stock, old})}});
  ASSERT_EQ(d.size(), 3u) << ::testing::PrintToString(d);
  EXPECT_EQ(d[0], "host gpu02: net.ipv4.tcp_rmem default 131072 bytes, expected at least 4194304");
  EXPECT_EQ(d[1], "host gpu03: net.ipv4.tcp_rmem unknown (not in its context or not readable there), expected a "
                  "default of at least 4194304 bytes");
  EXPECT_EQ(d[2], "host gpu03: net.ipv4.tcp_wmem unknown (not in its context or not readable there), expected a "
                  "default of at least 16384 bytes");
}

TEST(ExpectedTopology, BadFilesNameTheLine) {
  try {
    parse_expectation("hosts: 1\ngpus: 8\n", "e.yaml");
    FAIL() << "accepted an unknown key";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), ExitCode::usage);
    EXPECT_NE(std::string(err.what()).find("e.yaml:2: unknown key 'gpus'; expected one of:"), std::string::npos) << err.what();
  }
  EXPECT_THROW(parse_expectation("hosts: many\n", "e.yaml"), Error);
  EXPECT_THROW(parse_expectation("[1, 2]\n", "e.yaml"), Error);
}

}  // namespace
}  // namespace ccbench
