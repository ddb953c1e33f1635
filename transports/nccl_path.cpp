#include "transports/nccl_path.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/knobs.h"
#include "transports/ib/ib_transport.h"
#include "core/transport_names.h"

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

namespace {

// A library NCCL may load as its net plugin, and the NCCL_NET_PLUGIN value that makes it do so.
struct PluginCandidate {
  std::string library;
  std::string setting;  // "": NCCL's default (libnccl-net.so), or the user's own NCCL_NET_PLUGIN
};

// NCCL expands NCCL_NET_PLUGIN=X to libnccl-net-X.so (newer NCCL tries X itself first): every NCCL
// takes that short form, whichever one --nccl-library loads. NCCL opens the plugin
// with its own dlopen: the library search path (LD_LIBRARY_PATH, ld.so.cache) finds the same
// file for it as for this probe.
std::vector<PluginCandidate> plugin_candidates() {
  if (const char* named = std::getenv("NCCL_NET_PLUGIN"); named && *named)
    return {{named, ""}, {fmt::format("libnccl-net-{}.so", named), ""}};
  return {{"libnccl-net-ofi.so", "ofi"}, {"libnccl-net-aws-ofi.so", "aws-ofi"}, {"libnccl-net.so", ""}};
}

// The name of the net plugin `lib` exports (every ncclNet_vN structure starts with it), newest
// interface first, or "".
std::string plugin_net_name(void* lib) {
  constexpr int kNewest = 12, kOldest = 6;  // the interfaces NCCL 2.14 and newer may load
  for (int v = kNewest; v >= kOldest; --v) {
    const auto* net = static_cast<const char* const*>(dlsym(lib, fmt::format("ncclNetPlugin_v{}", v).c_str()));
    if (net && *net) return *net;
  }
  return "";
}

}  // namespace

std::optional<OfiNcclPlugin> find_ofi_nccl_plugin(std::string* why) {
  std::string tried;
  for (const PluginCandidate& c : plugin_candidates()) {
    void* h = dlopen(c.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    const std::string net = h ? plugin_net_name(h) : "";
    const bool libfabric = net.find("Libfabric") != std::string::npos;  // "Libfabric", "AWS Libfabric"
    if (libfabric) return OfiNcclPlugin{c.library, net, c.setting};     // stays loaded: NCCL loads it again
    tried += fmt::format("{}{} ({})", tried.empty() ? "" : ", ", c.library,
                         !h            ? "not found"
                         : net.empty() ? "not an NCCL net plugin"
                                       : "its net is " + net);
    if (h) dlclose(h);
  }
  if (why)
    *why = fmt::format(
        "no aws-ofi-nccl net plugin for NCCL (tried {}; install aws-ofi-nccl where the library search "
        "path finds it, or set NCCL_NET_PLUGIN)",
        tried);
  return std::nullopt;
}

std::optional<std::string> nccl_path_refusal() {
  if (g_pinning.refused.empty()) return std::nullopt;
  return g_pinning.refused;
}

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
  } else if (t == Transport::ofi) {
    std::string why;
    if (auto plugin = find_ofi_nccl_plugin(&why)) {
      apply(p, "NCCL_P2P_DISABLE", "1");
      apply(p, "NCCL_SHM_DISABLE", "1");
      if (!plugin->setting.empty()) apply(p, "NCCL_NET_PLUGIN", plugin->setting);
      apply(p, "NCCL_NET", plugin->net);
      p.pinned = "net/ofi";
    } else {
      p.refused = "--transport ofi: " + why;
    }
  }
  if (layout.emulated) {
    const std::string id = env_text(Knob::hostid).value_or(fmt::format("ccbench-node-{}", layout.node()));
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
  if (g_pinning.pinned.empty()) return std::string(kNcclLabel);
  if (!g_log_file.empty()) {
    std::ifstream f(g_log_file);
    std::stringstream text;
    text << f.rdbuf();
    const std::string used = nccl_transports_in_log(text.str());
    if (!used.empty()) return fmt::format("{}:{}", kNcclLabel, used);
  }
  return fmt::format("{}:pinned {}", kNcclLabel, g_pinning.pinned);
}

}  // namespace ccbench
