#pragma once
// What this node is made of, for the context block of every output and `ccbench topo`:
// CPU packages, cores, NUMA nodes and caches (hwloc), RDMA devices and their ports (ibverbs),
// the GPU driver and each GPU's active NVLink links (NVML, loaded at run time with dlopen, as
// NCCL does), the kernel's TCP socket buffers (/proc/sys). Each part says "not built in" or "not
// available" with the reason instead of failing (a /proc/sys value it cannot read is null):
// discovery never stops a run.
#include <nlohmann/json.hpp>

namespace ccbench {

// Everything known about the local node as JSON: {"cpu": {...}, "rdma": {...}, "gpus": {...},
// "tcp": {...}} (the kernel's TCP socket buffer settings), and "gpu_nic_paths".
nlohmann::ordered_json discover_node();

// A few lines for people, from discover_node()'s result (and cpu.reduce_vector_set where the
// harness added it).
std::string describe_node(const nlohmann::ordered_json& node);

}  // namespace ccbench
