#include "transports/nccl_path.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "transports/ib/ib_transport.h"
#include "transports/names.h"

namespace ccbench {

namespace {

NcclPinning g_pinning;   // what this process applied
std::string g_log_file;  // where NCCL_DEBUG=INFO goes, or ""

void apply(NcclPinning& p, const char* name, const std::string& value) {
  setenv(name, value.c_str(), 1);
  p.settings.push_back(fmt::format("{}={}", name, value));
}

}  // namespace

const char* nccl_gdr_level(bool gpudirect) { return gpudirect ? "SYS" : "LOC"; }

NcclPinning pin_nccl_path(const std::string& transport, const RankLayout& layout) {
  NcclPinning p;
  const std::optional<Transport> t = parse_transport(transport);
  if (t == Transport::host) {
    apply(p, "NCCL_P2P_DISABLE", "1");
    p.pinned = "shm";
  } else if (t == Transport::net || t == Transport::tcp) {
    apply(p, "NCCL_P2P_DISABLE", "1");
    apply(p, "NCCL_SHM_DISABLE", "1");
    apply(p, "NCCL_NET", "Socket");
    if (layout.hosts == 1 && !std::getenv("NCCL_SOCKET_IFNAME")) apply(p, "NCCL_SOCKET_IFNAME", "lo");
    p.pinned = "net/socket";
  } else if (t == Transport::ib) {
    // Our kernels and NCCL need the same: a device with an active port matching --ib-dev.
    if (auto why = ib_unavailable_reason())
      fail(ExitCode::precondition, "--transport ib: host {}: {}; use net or tcp for sockets", layout.host(), *why);
    apply(p, "NCCL_NET", "IB");
    // GPUDirect as ours: wherever the GPU and NIC allow it (SYS), or never (LOC, --gpudirect off).
    if (!std::getenv("NCCL_NET_GDR_LEVEL")) apply(p, "NCCL_NET_GDR_LEVEL", nccl_gdr_level(ib_options().gpudirect));
    p.pinned = "net/ib";
  }
  if (layout.emulated) {
    const std::string id = std::getenv("CCBENCH_HOSTID") && *std::getenv("CCBENCH_HOSTID")
                               ? std::string(std::getenv("CCBENCH_HOSTID"))
                               : fmt::format("ccbench-node-{}", layout.node());
    apply(p, "NCCL_HOSTID", id);
    p.pinned += p.pinned.empty() ? "hostid" : "+hostid";
  }
  if (!p.pinned.empty() && !std::getenv("NCCL_DEBUG")) {
    g_log_file = fmt::format("/tmp/ccbench-nccl-{}.log", getpid());
    std::filesystem::remove(g_log_file);
    apply(p, "NCCL_DEBUG", "INFO");
    apply(p, "NCCL_DEBUG_SUBSYS", "INIT");
    apply(p, "NCCL_DEBUG_FILE", g_log_file);
  }
  g_pinning = p;
  return p;
}

std::string nccl_transports_in_log(const std::string& log) {
  std::vector<std::string> seen;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find(" via ");
    if (at == std::string::npos) continue;
    std::string what = line.substr(at + 5);
    what = what.substr(0, what.find_first_of(" \t\r"));
    // P2P/CUMEM/read -> P2P; SHM/direct/direct -> SHM; NET/Socket/0 -> NET/Socket.
    const auto slash = what.find('/');
    if (what.rfind("NET/", 0) == 0 || what.rfind("COLLNET/", 0) == 0) {
      const bool gdr = what.find("/GDRDMA") != std::string::npos;  // NET/IB/0/GDRDMA: GPUDirect RDMA
      const auto second = what.find('/', slash + 1);
      what = what.substr(0, second) + (gdr ? "/GDRDMA" : "");
    } else {
      what = what.substr(0, slash);
    }
    if (what.empty()) continue;
    if (std::find(seen.begin(), seen.end(), what) == seen.end()) seen.push_back(what);
  }
  std::string joined;
  for (const std::string& s : seen) joined += (joined.empty() ? "" : "+") + s;
  return joined;
}

std::string nccl_path_label() {
  if (g_pinning.pinned.empty()) return "nccl";
  if (!g_log_file.empty()) {
    std::ifstream f(g_log_file);
    std::stringstream text;
    text << f.rdbuf();
    const std::string used = nccl_transports_in_log(text.str());
    if (!used.empty()) return "nccl:" + used;
  }
  return "nccl:pinned " + g_pinning.pinned;
}

}  // namespace ccbench
