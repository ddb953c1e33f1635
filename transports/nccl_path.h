#pragma once
// NCCL on the same path as ours, for a fair comparison. NCCL reads these settings once per
// process and caches them (NCCL 2.28: NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_NET,
// NCCL_HOSTID, NCCL_DEBUG), so they are set before any communicator exists, once per launch;
// a side-by-side comparison of paths needs one launch per path (scripts/paths.sh).
//   auto, p2p   nothing forced (NCCL's own choice: P2P within a node)
//   host        NCCL_P2P_DISABLE=1 (its SHM transport, staged through host memory)
//   net, tcp    NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket (and NCCL_SOCKET_IFNAME=lo
//               when every rank is on one host and none was given)
//   ib          NCCL_NET=IB, NCCL_NET_GDR_LEVEL as our --gpudirect (unless set); Error(precondition)
//               when the host has no RDMA device
//   ofi         NCCL over libfabric through the aws-ofi-nccl net plugin where one is installed
//               (find_ofi_nccl_plugin): NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1, NCCL_NET_PLUGIN
//               (unless set), NCCL_NET=<the plugin's name>; without the plugin nothing is set and
//               NCCL's rows are skipped with that reason (nccl_path_refusal), as they are
//               without a loadable NCCL, which comes first. The plugin shares this
//               process's libfabric, which reads FI_PROVIDER once: set it in the environment to
//               pin NCCL's provider and ours alike.
// Emulated nodes: NCCL_HOSTID = the rank's node ("ccbench-node-N", or CCBENCH_HOSTID), so NCCL
// splits the ranks as we do and connects the nodes over its network transport.
// To learn what NCCL really used, NCCL_DEBUG=INFO goes to a private file (unless the user set
// NCCL_DEBUG); nccl_path_label() reads its "via ..." lines after a communicator is set up.
#include <optional>
#include <string>
#include <vector>

#include "topologies/layout.h"

namespace ccbench {

struct NcclPinning {
  std::string pinned;                 // "", "shm", "net/socket", "net/ib", "net/ofi", with "+hostid" for emulated nodes
  std::vector<std::string> settings;  // "NAME=value" as applied
  std::string refused;                // why NCCL cannot run on the path asked for (its rows are skipped), or ""
};

// The aws-ofi-nccl net plugin NCCL would load: the library (NCCL_NET_PLUGIN's as NCCL expands it,
// else libnccl-net-ofi.so, libnccl-net-aws-ofi.so, libnccl-net.so, through the library search
// path as NCCL's own dlopen) that exports ncclNetPlugin_v6..v12 with a name containing
// "Libfabric". `why` says what was tried when there is none. Whether the NCCL loaded at run time
// (collectives/nccl/nccl_library.h) takes the plugin's interface versions is known only when it
// initialises: a mismatch fails NCCL's rows with NCCL's own message (NCCL_NET names the plugin).
struct OfiNcclPlugin {
  std::string library;  // as dlopen found it
  std::string net;      // the plugin's net name ("Libfabric", "AWS Libfabric"): NCCL_NET
  std::string setting;  // NCCL_NET_PLUGIN to set ("ofi"), or "" (NCCL's default, or the user's own)
};
std::optional<OfiNcclPlugin> find_ofi_nccl_plugin(std::string* why);

// Why NCCL's rows are skipped on the path pinned (ofi without the plugin), or nullopt.
std::optional<std::string> nccl_path_refusal();

// Applies the settings for GPU ranks' --transport (before NCCL initialises). Throws
// Error(precondition) for ib without an RDMA device, naming the host.
NcclPinning pin_nccl_path(const std::string& transport, const RankLayout& layout);

// NCCL_NET_GDR_LEVEL matching our --gpudirect: SYS (GPUDirect RDMA wherever GPU and NIC allow
// it, as ours registers GPU memory whatever the PCIe distance) or LOC (never).
const char* nccl_gdr_level(bool gpudirect);

// The row's transport for NCCL: "nccl" when nothing was pinned; otherwise "nccl:" + what NCCL's
// debug log says it connected over (e.g. "nccl:NET/Socket", "nccl:SHM", "nccl:P2P+NET/Socket"),
// or "nccl:pinned <what>" when the log could not be read.
std::string nccl_path_label();

// The distinct transports named by NCCL debug lines "... via P2P/CUMEM/read", "via SHM/direct/
// direct", "via NET/Socket/0", "via NET/IB/0/GDRDMA" in `log`: "P2P", "SHM", "NET/Socket",
// "NET/IB/GDRDMA" (GPUDirect RDMA), joined by '+' in order of first appearance; "" when there are none.
std::string nccl_transports_in_log(const std::string& log);

}  // namespace ccbench
