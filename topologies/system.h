#pragma once
// A described system: nodes, the GPUs (or CPU ranks) in each, how they are joined inside a node,
// the NICs per node and the fabric between nodes. Read from and written to topology files (YAML,
// topologies/presets/ holds examples); the performance model (harness/model/model.h) runs schedules
// over it. Bandwidths are GB/s (1e9 B/s) per direction, latencies microseconds.
#include <string>
#include <string_view>

namespace ccbench {

// One link class: what one flow gets from it alone, per direction.
struct LinkSpec {
  double bandwidth_gbps = 0;
  double latency_us = 0;
};

// How the ranks of one node reach each other.
enum class IntraFabric {
  nvswitch,     // every GPU has one port of `gpu_link` bandwidth into a non-blocking switch
  nvlink_mesh,  // every GPU pair has its own direct links: `gpu_link` per GPU, split evenly over its peers
  pcie,         // GPUs under PCIe switches (`gpus_per_switch` each) that meet at the host bridge
  host,         // staged through host memory (CPU shared memory, or pinned buffers over PCIe)
};

// How fast our GPU FIFO kernels run on this node's GPUs (harness/model/model.h, KernelPipeline): what
// one block moves per direction at most, and a GPU copying its own memory (bytes copied per
// second). Measured figures of one GPU model; 0: not described (GPU ring and tree rows are then
// predicted by their schedules alone).
struct GpuKernelSpec {
  double block_gbps = 0;
  double local_copy_gbps = 0;
  bool described() const { return block_gbps > 0 && local_copy_gbps > 0; }
};

struct NodeSpec {
  int ranks = 1;  // GPUs (or CPU ranks) per node
  IntraFabric fabric = IntraFabric::nvswitch;
  LinkSpec gpu_link;        // each rank's own link into the node fabric
  int gpus_per_switch = 0;  // pcie: ranks under one PCIe switch (0: all under one)
  LinkSpec switch_uplink;   // pcie: each switch's link to the host bridge
  int nics = 0;             // NICs per node; rank r of a node uses NIC r * nics / ranks (rail)
  LinkSpec nic;             // each NIC, per direction
  GpuKernelSpec kernels;    // optional
};

struct SystemTopology {
  std::string name;
  std::string description;
  int nodes = 1;
  NodeSpec node;
  // Between nodes: the fabric's own latency, and the ratio of the NICs' total bandwidth to what
  // the fabric gives each node (1 = non-blocking fat tree, 2 = 2:1 oversubscribed).
  double fabric_latency_us = 0;
  double oversubscription = 1.0;

  int ranks() const { return nodes * node.ranks; }
};

std::string_view name(IntraFabric f);

// Reads a topology file. Throws Error(usage) naming the file, the line and what is expected for a
// malformed file, a missing or unknown key, or a value out of range.
SystemTopology load_topology(const std::string& path);
// Parses topology YAML text; `origin` names it in messages.
SystemTopology parse_topology(const std::string& yaml_text, const std::string& origin);
// The same system as topology-file YAML (load_topology(dump) gives it back).
std::string dump_topology(const SystemTopology& t);

// Resolves a preset name ("h200x2-nv18", a file of data_dirs("presets"): core/data_dir.h) or a
// path to a topology file; `option` names the option in the message of Error(usage) when neither
// exists, which lists the presets found.
std::string resolve_topology_path(const std::string& name_or_path, const std::string& option = "--topology");

}  // namespace ccbench
