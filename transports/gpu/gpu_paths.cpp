#include "transports/gpu/gpu_paths.h"

#include <fmt/format.h>

#include "core/transport_names.h"

namespace ccbench {

namespace {

std::string nodes_differ(const RankLayout& l, int a, int b) {
  return fmt::format("ranks {} and {} are on different nodes ({} and {}{})", a, b, l.node_of[a], l.node_of[b],
                     l.emulated ? ", emulated" : "");
}

const std::string kP2p(name(Transport::p2p)), kHost(name(Transport::host)), kNet(name(Transport::net));

// The transport `choice` gives pair (a, b), or "" with `why`.
std::string pick(const RankLayout& l, std::string_view choice, int a, int b, const PeerAccess& access,
                 std::string* why) {
  const std::optional<Transport> t = parse_transport(choice);
  switch (t && valid_in(*t, kGpuRanks) ? *t : Transport::ce) {
    case Transport::p2p: return p2p_can_connect(l, a, b, access, why) ? kP2p : "";
    case Transport::host: return host_can_connect(l, a, b, why) ? kHost : "";
    case Transport::net:
    case Transport::tcp:
    case Transport::ib:
    case Transport::ofi: return kNet;  // any pair, within a node too
    case Transport::auto_select: {
      std::string ignored;
      if (p2p_can_connect(l, a, b, access, &ignored)) return kP2p;
      if (host_can_connect(l, a, b, &ignored)) return kHost;
      return kNet;
    }
    default:
      *why = fmt::format("--transport {}: our GPU kernels connect over p2p, host or net (valid for GPU ranks: {})",
                         choice, valid_gpu_transports());
      return "";
  }
}

}  // namespace

bool p2p_can_connect(const RankLayout& l, int a, int b, const PeerAccess& access, std::string* why) {
  if (!l.same_node(a, b)) {
    *why = nodes_differ(l, a, b) + ": p2p maps peer GPU memory within one node";
    return false;
  }
  if (!access(a, b)) {
    *why = fmt::format("the GPUs of ranks {} and {} have no peer access (no NVLink or PCIe peer-to-peer)", a, b);
    return false;
  }
  return true;
}

bool host_can_connect(const RankLayout& l, int a, int b, std::string* why) {
  if (l.same_node(a, b)) return true;
  *why = nodes_differ(l, a, b) + ": host shares pinned memory within one node";
  return false;
}

std::string valid_gpu_transports() { return valid_transports(kGpuRanks); }

GpuPaths plan_gpu_paths(const RankLayout& l, std::string_view choice, const PeerAccess& access,
                        const std::optional<std::string>& ib_unavailable) {
  GpuPaths g;
  const bool ib = parse_transport(choice) == Transport::ib;
  if (ib && ib_unavailable) {
    g.of.assign(static_cast<std::size_t>(l.nranks), std::vector<std::string>(static_cast<std::size_t>(l.nranks)));
    g.label = "net/ib";
    g.refused = "--transport ib: " + *ib_unavailable;
    return g;
  }
  if (ib || (parse_transport(choice) == Transport::auto_select && !ib_unavailable)) g.net_backend = name(Transport::ib);
  if (parse_transport(choice) == Transport::ofi) g.net_backend = name(Transport::ofi);
  const auto n = static_cast<std::size_t>(l.nranks);
  g.of.assign(n, std::vector<std::string>(n));
  bool used[3] = {false, false, false};  // p2p, host, net
  for (int a = 0; a < l.nranks; ++a)
    for (int b = 0; b < l.nranks; ++b) {
      if (a == b) continue;
      std::string why;
      std::string& t = g.of[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
      t = pick(l, choice, a, b, access, &why);
      used[0] |= t == kP2p;
      used[1] |= t == kHost;
      used[2] |= t == kNet;
      if (t.empty() && g.refused.empty()) g.refused = why;
    }
  const std::string names[3] = {kP2p, kHost, kNet + "/" + g.net_backend};
  for (int i = 0; i < 3; ++i) {
    if (!used[i]) continue;
    if (!g.label.empty()) g.label += '+';
    g.label += names[i];
  }
  if (g.label.empty()) g.label = kP2p;  // one rank: nothing to connect
  return g;
}

std::optional<std::string> ib_skipped_note(const RankLayout& l, std::string_view choice,
                                           const std::optional<std::string>& ib_unavailable) {
  if (parse_transport(choice) != Transport::auto_select || l.nodes < 2 || !ib_unavailable) return std::nullopt;
  return "net pairs run over tcp: ib skipped: " + *ib_unavailable;
}

}  // namespace ccbench
