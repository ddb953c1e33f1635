#pragma once
// The expected shape of every host (`ccbench topo --expect FILE`): what an operator knows each node
// of a cluster must have, compared with what discovery found. A YAML file of optional keys:
//   hosts: 2                     number of hosts in the job
//   cores_per_host: 112          CPU cores (hwloc)
//   numa_nodes: 2
//   gpus_per_host: 8
//   gpu_name: H200               a substring of every GPU's name
//   nvlinks_per_gpu: 18          NVLink links up on every GPU
//   gpu_paths: NV18              the path between every GPU pair (nvidia-smi's word)
//   pcie_gen: 5                  every GPU's current PCIe link generation ...
//   pcie_width: 16               ... and width
//   nics_per_host: 8             RDMA devices
//   nic_state: PORT_ACTIVE       every RDMA port's state
//   nic_rate: 400 Gb/sec         a substring of every RDMA port's rate
//   min_tcp_rmem_default: 4194304  at least this many bytes in net.ipv4.tcp_rmem's default (the
//   min_tcp_wmem_default: 16384    receive / send buffer a socket left to autotuning starts from)
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccbench {

struct TopologyExpectation {
  std::optional<int> hosts, cores_per_host, numa_nodes, gpus_per_host, nvlinks_per_gpu, pcie_gen, pcie_width,
      nics_per_host, min_tcp_rmem_default, min_tcp_wmem_default;
  std::optional<std::string> gpu_name, gpu_paths, nic_state, nic_rate;
};

// Reads an expectation file; throws Error(usage) naming the file, line and what is expected.
TopologyExpectation load_expectation(const std::string& path);
TopologyExpectation parse_expectation(const std::string& yaml_text, const std::string& origin);

// Every difference between the expectation and a cluster as `ccbench topo` gathers it
// ({"hosts": [{"host": ..., "node": discover_node()}, ...]}), one line each, naming host, GPU or
// NIC and what was expected. Empty when everything matches.
std::vector<std::string> topology_differences(const TopologyExpectation& e, const nlohmann::ordered_json& cluster);

}  // namespace ccbench
