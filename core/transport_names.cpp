#include "core/transport_names.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"

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

}  // namespace ccbench
