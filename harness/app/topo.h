#pragma once
// `ccbench topo`: what every host of the job is made of, gathered to rank 0 and printed once
// (CPUs, GPUs with PCI ids, NUMA nodes and PCIe links, the GPU/NIC path matrix, RDMA ports, each
// rank's CPU binding), written to topology.json in the results folder (--out; it says where), and
// checked against an expected shape (--expect).
#include <string>

namespace ccbench {

struct TopoRequest {
  bool json = false;
  std::string dump;          // --dump FILE: write the node as a topology file instead
  std::string out;           // --out: the results folder; "" a new one, "none" no file
  std::string expect;        // --expect FILE (topologies/expect.h)
  bool overwrite = false;    // --overwrite: replace the topology.json of an earlier run
  std::string command_line;  // for the results folder's lock file
};

// Under mpirun or alone; returns the exit code agreed by all ranks (4 when --expect found a
// difference).
int run_topology(const TopoRequest& req, int* argc, char*** argv);

}  // namespace ccbench
