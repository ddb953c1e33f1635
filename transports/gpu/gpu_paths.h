#pragma once
// Which GPU transport connects each pair of GPU ranks (pure: no CUDA, testable without a GPU).
//
// The GPU transports, in probe order (as NCCL's P2P > SHM > NET):
//   p2p   CUDA IPC peer memory: the sender's SMs write the receiver's GPU memory (NVLink or
//         PCIe peer-to-peer). Needs one node and peer access between the two GPUs.
//   host  pinned shared host memory on the node (/dev/shm mapped into both processes and
//         registered with CUDA): the sender's SMs write the receiver-side host FIFO across PCIe,
//         the receiver's SMs read it (or either half by the copy engines through a CPU proxy,
//         gpu_host_ce.h). Needs one node only.
//   net   FIFOs on each side moved by CPU proxy threads per rank (gpu_net.h) over a network
//         backend: tcp sockets, ib (RDMA WRITEs straight between the FIFOs' slots, which sit in
//         GPU memory with GPUDirect RDMA, else in pinned host memory), or ofi (libfabric: the
//         same, over any provider; forced only). Connects any pair; auto takes it across nodes
//         only, over ib where every rank has an active RDMA port.
// Nodes are RankLayout nodes, so emulated nodes (--emulate-nodes, CCBENCH_HOSTID) refuse p2p
// and host exactly as real ones do.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/layout.h"
#include "core/transport_names.h"

namespace ccbench {

// Whether ranks a and b's GPUs can map each other's memory (both directions).
using PeerAccess = std::function<bool(int a, int b)>;

// Each probe says whether the transport can connect ranks a and b; `why` says why not.
bool p2p_can_connect(const RankLayout& l, int a, int b, const PeerAccess& access, std::string* why);
bool host_can_connect(const RankLayout& l, int a, int b, std::string* why);

struct GpuPaths {
  std::vector<std::vector<std::string>> of;  // [a][b]: "p2p", "host", "net", or "" (a == b, or refused)
  std::string label;    // the transports any pair uses, in probe order joined by '+': "p2p", "p2p+net/tcp"
  std::string refused;  // empty when every pair is connected; otherwise which pair and why
  std::string net_backend{name(Transport::tcp)};  // what the net pairs run over: "tcp", "ib" or "ofi"

  // Whether every pair uses `t` (the label is its name alone), and whether some pair does.
  bool only(Transport t) const { return label == name(t); }
  bool uses(Transport t) const { return label.find(name(t)) != std::string::npos; }
};

// The GPU --transport values, from core/transport_names.h: "auto, p2p, host, net, tcp, ib, ofi" (cuda_ipc
// is p2p's earlier name).
std::string valid_gpu_transports();

// Plans every pair of `l` for --transport `choice` (a name of core/transport_names.h): auto takes p2p where it can,
// host where it can, net across nodes (over ib unless `ib_unavailable`, else over tcp: ib_skipped_note); p2p and host
// must connect every pair; net and tcp use net over tcp for every pair, ofi net over ofi, ib net over ib (refused with
// the reason when `ib_unavailable`). `ib_unavailable` is why ib cannot connect every pair of ranks (agreed over the
// ranks), or nullopt when it can. Same result on every rank.
GpuPaths plan_gpu_paths(const RankLayout& l, std::string_view choice, const PeerAccess& access,
                        const std::optional<std::string>& ib_unavailable);

// What a run with --transport `choice` says when its GPU ranks on different nodes connect over
// tcp because ib is unavailable: "net pairs run over tcp: ib skipped: <why>"; nullopt otherwise
// (another transport, one node, or ib available).
std::optional<std::string> ib_skipped_note(const RankLayout& l, std::string_view choice,
                                           const std::optional<std::string>& ib_unavailable);

}  // namespace ccbench
