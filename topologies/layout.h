#pragma once
// Where the ranks of a run are: hosts, nodes and node-local numbering. Built once by the
// harness (an MPI all-gather of host names) and shared read-only by every layer.
//
// A node is what the transports treat as one machine: ranks of one node may share memory (shm,
// CUDA IPC, pinned host memory); ranks of different nodes talk over the network. Normally a node
// is a host. Two settings split one host into emulated nodes, so that every inter-node path runs
// on one machine:
//   - a host id per rank (CCBENCH_HOSTID, as NCCL_HOSTID): ranks with different ids are on
//     different nodes even on one host;
//   - emulate_nodes(N) (--emulate-nodes N): the ranks of each node are split into N nodes in
//     rank order.
// Every can-connect probe compares nodes (same_node), never hosts; `hosts` and `host_of` stay
// the real machines (tcp uses loopback when there is one host).
#include <string>
#include <vector>

namespace ccbench {

inline constexpr int kUnknownLinks = -1;
inline constexpr int kSameGpuLinks = 1 << 16;  // nearer than any NVLink count: no link to cross

struct RankLayout {
  int rank = 0;
  int nranks = 1;
  std::vector<std::string> host_of;  // host name of every rank (the real machine)
  std::vector<int> node_of;          // node index of every rank (nodes numbered by first rank)
  std::vector<int> local_rank_of;    // rank within its node, for every rank
  std::vector<int> numa_of;  // NUMA node of each rank (its GPU's, or its bound cores'), -1 unknown; empty: not gathered
  // NVLink links between the GPUs of ranks a and b, gpu_links[a][b] (symmetric): a count from 0
  // (0: joined by PCIe or the CPU only), kSameGpuLinks where both use one GPU, kUnknownLinks where
  // not known (ranks of different hosts, no GPU, no NVML). Empty: not gathered (CPU ranks, and
  // GPU ranks unless --ring-order topo asks for it).
  std::vector<std::vector<int>> gpu_links;
  // GPU ranks: the PCI bus id of every rank's GPU ("00000000:19:00.0"), or its UUID ("GPU-...")
  // where CUDA gives no bus id, gathered by the harness once devices are chosen, so that "the
  // same GPU" is asked of the hardware, not inferred from device ordinals (which differ between
  // processes under CUDA_VISIBLE_DEVICES). Never an empty entry once gathered (an empty one is
  // no GPU's: same_gpu() is false). Empty: CPU ranks, or not gathered (then same_gpu() falls
  // back to the ordinal the harness assigns).
  std::vector<std::string> gpu_of;
  // GPU ranks: [a][b] when the GPUs of ranks a and b can map each other's memory (true for one
  // GPU), as every rank answered for its own GPU and agreed by all; empty: not gathered.
  std::vector<std::vector<bool>> gpu_peer_access;
  std::vector<int> host_local_of;  // a subset's ranks' host_local_rank in the full run; empty: counted from host_of
  int nodes = 1;
  int hosts = 1;          // distinct real hosts
  bool emulated = false;  // nodes were split by host ids or emulate_nodes()

  int node() const { return node_of[rank]; }
  int local_rank() const { return local_rank_of[rank]; }
  int local_ranks() const;  // ranks on this rank's node
  int max_ranks_per_node() const;
  bool same_node(int a, int b) const { return node_of[a] == node_of[b]; }
  const std::string& host() const { return host_of[rank]; }
  // Whether ranks a and b drive the same GPU: one host and one identity (gpu_of), or where those
  // were not gathered, the same ordinal host_local_rank % visible_gpus.
  bool same_gpu(int a, int b, int visible_gpus) const;
  // The lowest rank that shares its GPU with a lower rank of its node, or -1 when every rank of a
  // node has a GPU of its own (what NCCL requires of the ranks of one node).
  int first_rank_sharing_a_gpu(int visible_gpus) const;

  // A layout from host names alone (ranks on one host form a node, in rank order). A non-empty
  // host_ids[r] replaces rank r's host name as its node key (CCBENCH_HOSTID).
  static RankLayout from_hosts(int rank, std::vector<std::string> hosts, const std::vector<std::string>& host_ids = {});
  // Splits every node into `n` emulated nodes in rank order (1 leaves the layout as it is).
  // Throws Error(usage) unless 1 <= n <= the ranks of the smallest node.
  void emulate_nodes(int n);
  // The GPU index a rank uses among the GPUs of its host: its rank among the ranks of its host
  // (emulated nodes on one host must not all take GPU 0).
  int host_local_rank() const { return host_local_rank(rank); }
  int host_local_rank(int r) const;
  int host_ranks() const;  // ranks on this rank's host
  // The layout of a sub-group: `members` (ranks of this layout, ascending) renumbered 0..n-1,
  // keeping their hosts, nodes (emulated ones included) and GPU choice (host_local_rank); this
  // rank must be a member.
  RankLayout subset(const std::vector<int>& members) const;
};

// CCBENCH_HOSTID of this process, or "" when unset.
std::string host_id_from_environment();

}  // namespace ccbench
