#pragma once
// The one vocabulary of transport names. Every --transport value (run, links), every list of
// valid names in a message and every transport label of a result row or a links cell is parsed
// and printed through this table; no other file spells a transport's name. The grammar of result-row
// labels built from these names ("p2p+net/tcp", "ofi:shm:rma") is transports/labels.h.
//
// One enum serves three uses of the word, because they name the same wires:
//   CPU channels  how CPU ranks' channels move bytes (transports/connect.h): shm, mpi, tcp, ib, ofi.
//   GPU paths     how our GPU kernels reach a peer (transports/gpu/gpu_paths.h): p2p, host, net, with
//                 tcp, ib and ofi meaning net over that backend; NCCL is pinned to the same path
//                 (transports/nccl_path.h).
//   link modes    how `ccbench links` drives the link between two GPU ranks: ce (copy engines),
//                 sm (SM stores), pcie (pinned host copies). They measure a link rather than
//                 carry a collective, so they are valid in links only.
// `auto` lets ccbench choose in each. A name's scopes say where it is valid; a name given where
// it is not is refused with what is valid there.
//
// Aliases: `cuda_ipc` is p2p's earlier name. Result files written before the rename carry it and
// scripts may pass it, so it parses as p2p wherever p2p is valid (and stays valid in a result
// label); ccbench itself prints p2p. `nccl` is not a transport: it names an implementation
// (--impl nccl), which follows --transport as ours do. --transport nccl used to be accepted and
// measured NCCL with nothing pinned (what auto does) while refusing every other implementation;
// it is refused now, pointing at --impl nccl.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

enum class Transport { auto_select, shm, mpi, p2p, host, net, tcp, ib, ofi, ce, sm, pcie };

// Where a name is valid; a bit set.
enum TransportScope : unsigned {
  kCpuRanks = 1u << 0,  // run on CPU ranks: the CPU channel transport
  kGpuRanks = 1u << 1,  // run on GPU ranks: the GPU path (and NCCL's, pinned alike)
  kCpuLinks = 1u << 2,  // links on CPU ranks
  kGpuLinks = 1u << 3,  // links on GPU ranks
  kRunScopes = kCpuRanks | kGpuRanks,
  kLinksScopes = kCpuLinks | kGpuLinks,
};

struct TransportName {
  Transport id;
  std::string_view name;
  unsigned scopes;           // TransportScope bits
  std::string_view meaning;  // one line, for --help and the reference
};

// Every transport in the order valid lists give them: auto, the CPU channels, the GPU paths, then
// the GPU link modes.
const std::vector<TransportName>& transport_table();

std::string_view name(Transport t);
// A name or an alias, whatever its scope; nullopt for anything else.
std::optional<Transport> parse_transport(std::string_view text);
bool valid_in(Transport t, unsigned scopes);  // true when valid in any of `scopes`
// The names valid in any of `scopes`, in table order.
std::vector<std::string> transport_names(unsigned scopes);
// The same joined: "auto, shm, mpi, tcp, ib".
std::string valid_transports(unsigned scopes);
// One --transport value valid in `scopes`; anything else is Error(usage) naming `flag`, the value,
// what is valid (and where the value would be), and the closest names.
Transport parse_transport_for(std::string_view text, unsigned scopes, std::string_view flag);

// NCCL's label when nothing is pinned; "nccl:<what NCCL's log names>" when something is.
inline constexpr std::string_view kNcclLabel = "nccl";
}  // namespace ccbench
