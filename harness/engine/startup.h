#pragma once
// The start-up block rank 0 prints before measuring, as nccl-tests' "# Using devices": every
// rank's host, process id, device (GPU name, PCI id and NUMA node; or the CPU cores it is bound
// to) and transport (with a note saying how to start several when there is one rank); then the
// number of measurements, where the results go, what the nccl-tests flags given mean here, and the
// ring order of our ring implementations.
#include <string>
#include <vector>

#include <mpi.h>

#include "harness/engine/backend.h"
#include "harness/engine/options.h"
#include "topologies/layout.h"

namespace ccbench {

// This rank's line of the block (without the leading "#  Rank N").
std::string describe_rank_placement(const RankLayout& layout, const Backend& backend, int cuda_device,
                                    const std::string& transport);

// The CPU cores this process may run on, as a list ("0-3,8"), and their NUMA nodes ("0" or "0,1").
std::string cpu_binding();

// Collective over `comm`: every rank's NUMA node (for topologies/ring_order.h's topo order): its
// GPU's (cuda_device >= 0), else that of the cores it is bound to; -1 where unknown or where the
// cores span several NUMA nodes.
std::vector<int> gather_numa_nodes(MPI_Comm comm, int cuda_device);
// NVML's and CUDA's name of GPU `cuda_device`: "GPU-" and its UUID in 8-4-4-4-12 hex digits; ""
// where CUDA does not say (or without CUDA).
inline constexpr const char* kGpuUuidPrefix = "GPU-";
std::string gpu_uuid(int cuda_device);
// What tells a GPU from another (RankLayout::gpu_of): its PCI bus id, or its UUID where CUDA gives
// no bus id. Pure.
std::string gpu_identity(const std::string& pci_id, const std::string& uuid);
// Collective over `comm`: RankLayout::gpu_of, every rank's GPU (cuda_device) by gpu_identity():
// its PCI bus id as CUDA names it ("00000000:19:00.0"), else its UUID. Never empty: a GPU with
// neither is one Error::agreed(runtime) naming the ranks, since a GPU that cannot be told apart
// would be counted once per rank sharing it (energy, NCCL's one-rank-per-GPU check).
std::vector<std::string> gather_gpu_ids(MPI_Comm comm, int cuda_device);
// Collective over `comm`: RankLayout::gpu_peer_access for `layout` (gpu_of gathered): [a][b] when
// the GPUs of ranks a and b can map each other's memory, each rank answering for its own GPU from
// what CUDA shows it; false across hosts and where a peer's GPU is not visible to a rank.
std::vector<std::vector<bool>> gather_gpu_peer_access(MPI_Comm comm, const RankLayout& layout, int cuda_device);
// Collective over `comm`: RankLayout::gpu_links for `layout`'s ranks, each rank answering for its
// own GPU (cuda_device) from NVML about the GPUs of the ranks on its host (layout.gpu_of); kUnknownLinks across
// hosts, without a GPU or where NVML does not say.
std::vector<std::vector<int>> gather_gpu_links(MPI_Comm comm, const RankLayout& layout, int cuda_device);
// Collective over `comm`: where ranks outnumber the hardware threads they may run on, the hosts
// and counts ("4 ranks on 2 hardware threads (host vm)", several joined by "; "); "" when no host
// is oversubscribed. A host's threads are the union of its ranks' CPU affinity masks, so ranks
// bound to shared cores count as oversubscribed too. The same text on every rank.
std::string gather_oversubscription(MPI_Comm comm, const RankLayout& layout);
// Collective: every rank's placement gathered on rank 0, which gets the whole block (others "").
std::string startup_block(MPI_Comm comm, const RankLayout& layout, const Backend& backend, int cuda_device,
                          const RunOptions& opts, std::uint64_t measurements, const std::string& results);

}  // namespace ccbench
