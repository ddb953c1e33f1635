#include "transports/names.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"
#include "transports/ofi/ofi_logic.h"

namespace ccbench {

namespace {

constexpr std::string_view kP2pAlias = "cuda_ipc";  // p2p's earlier name (see the header)

// Where a scope is, in words, for messages.
std::string scope_words(unsigned scopes) {
  std::vector<std::string> where;
  if (scopes & kCpuRanks) where.emplace_back("run on CPU ranks");
  if (scopes & kGpuRanks) where.emplace_back("run on GPU ranks");
  if (scopes & kCpuLinks) where.emplace_back("links on CPU ranks");
  if (scopes & kGpuLinks) where.emplace_back("links on GPU ranks");
  return fmt::format("{}", fmt::join(where, ", "));
}

// "net/tcp", "net/tcp:8", "net/ib", "net/ofi:<provider>:hmem|host"; false for anything else.
bool is_net_part(std::string_view part) {
  const std::string net = std::string(name(Transport::net)) + "/";
  if (part.substr(0, net.size()) != net) return false;
  std::string_view rest = part.substr(net.size());
  if (is_ofi_label(rest, true)) return true;
  const auto colon = rest.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view streams = rest.substr(colon + 1);
    if (streams.empty() || !std::all_of(streams.begin(), streams.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    rest = rest.substr(0, colon);
  }
  return rest == name(Transport::tcp) || rest == name(Transport::ib);
}

}  // namespace

const std::vector<TransportName>& transport_table() {
  static const std::vector<TransportName> table = {
      {Transport::auto_select, "auto", kRunScopes | kLinksScopes,
       "ccbench chooses per pair: CPU ranks shm within a node, mpi across; GPU ranks p2p, else host, else net "
       "(over ib where every rank has an active RDMA port). links: CPU ranks that, and ib where it can run; GPU "
       "ranks ce, sm and pcie"},
      {Transport::shm, "shm", kCpuRanks | kCpuLinks, "shared memory within a node"},
      {Transport::mpi, "mpi", kCpuRanks | kCpuLinks, "MPI point-to-point messages"},
      {Transport::p2p, "p2p", kGpuRanks,
       "CUDA IPC peer memory over NVLink or PCIe peer-to-peer, within a node (also cuda_ipc, its earlier name)"},
      {Transport::host, "host", kGpuRanks, "pinned shared host memory within a node"},
      {Transport::net, "net", kGpuRanks, "FIFOs moved by CPU proxy threads over tcp (ib: give --transport ib)"},
      {Transport::tcp, "tcp", kCpuRanks | kGpuRanks | kCpuLinks,
       "TCP sockets (CCBENCH_TCP_IF picks the interface); GPU ranks: net over tcp"},
      {Transport::ib, "ib", kCpuRanks | kGpuRanks | kCpuLinks,
       "RDMA WRITEs over ibverbs (--ib-* flags); GPU ranks: net over ib"},
      {Transport::ofi, "ofi", kCpuRanks | kGpuRanks | kCpuLinks,
       "libfabric: RMA writes or tagged messages over any provider, EFA, Slingshot (cxi), verbs, tcp, shm ... "
       "(--ofi-* flags); GPU ranks: net over ofi; never chosen by auto"},
      {Transport::ce, "ce", kGpuLinks, "peer copies by the copy engines"},
      {Transport::sm, "sm", kGpuLinks, "peer stores by the SMs"},
      {Transport::pcie, "pcie", kGpuLinks, "pinned host copies, device to host and host to device, per GPU"},
  };
  return table;
}

std::string_view name(Transport t) {
  for (const TransportName& n : transport_table())
    if (n.id == t) return n.name;
  return "?";
}

std::optional<Transport> parse_transport(std::string_view text) {
  if (text == kP2pAlias) return Transport::p2p;
  for (const TransportName& n : transport_table())
    if (n.name == text) return n.id;
  return std::nullopt;
}

bool valid_in(Transport t, unsigned scopes) {
  for (const TransportName& n : transport_table())
    if (n.id == t) return (n.scopes & scopes) != 0;
  return false;
}

std::vector<std::string> transport_names(unsigned scopes) {
  std::vector<std::string> out;
  for (const TransportName& n : transport_table())
    if (n.scopes & scopes) out.emplace_back(n.name);
  return out;
}

std::string valid_transports(unsigned scopes) { return fmt::format("{}", fmt::join(transport_names(scopes), ", ")); }

Transport parse_transport_for(std::string_view text, unsigned scopes, std::string_view flag) {
  const auto t = parse_transport(text);
  if (t && valid_in(*t, scopes)) return *t;
  if (t) {
    unsigned where = 0;
    for (const TransportName& n : transport_table())
      if (n.id == *t) where = n.scopes;
    fail(ExitCode::usage, "{}: '{}' is valid for {} only (valid here: {})", flag, text, scope_words(where),
         valid_transports(scopes));
  }
  if (text == "nccl")
    fail(ExitCode::usage,
         "{}: 'nccl' is an implementation, not a transport: give --impl nccl (NCCL follows "
         "--transport as ours do; valid: {})",
         flag, valid_transports(scopes));
  fail(ExitCode::usage, "{}: unknown value '{}' (valid: {}){}", flag, text, valid_transports(scopes),
       did_you_mean(text, transport_names(scopes)));
}

bool is_transport_label(std::string_view label) {
  if (label == "-" || label == "none" || label == kNcclLabel) return true;
  const std::string nccl_prefix = std::string(kNcclLabel) + ":";
  if (label.substr(0, nccl_prefix.size()) == nccl_prefix) return label.size() > nccl_prefix.size();
  if (label.empty()) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t plus = label.find('+', start);
    const std::string_view part = label.substr(start, plus == std::string_view::npos ? plus : plus - start);
    const auto t = parse_transport(part);
    // auto is a choice, net is always labelled with its backend ("net/tcp"), and ofi with its
    // provider and protocol ("ofi:shm:rma").
    const bool named = t && *t != Transport::auto_select && *t != Transport::net;
    if (!named && !is_net_part(part) && !is_ofi_label(part, false)) return false;
    if (plus == std::string_view::npos) return true;
    start = plus + 1;
  }
}

std::vector<std::string> transport_label_words() {
  std::vector<std::string> out;
  for (const TransportName& n : transport_table())
    if (n.id != Transport::auto_select && n.id != Transport::net) out.emplace_back(n.name);
  for (const char* more : {"net/tcp", "net/ib", "nccl", "none"}) out.emplace_back(more);
  return out;
}

}  // namespace ccbench
