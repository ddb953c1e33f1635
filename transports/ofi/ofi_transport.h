#pragma once
// The `ofi` CPU transport: channels (transports/channel.h) over libfabric reliable-datagram
// endpoints, the way to EFA (AWS), Slingshot (cxi), Omni-Path (opx, psm2), PSM3 and verbs through
// one API; over the tcp;ofi_rxm and shm providers on any machine.
//
// One endpoint, completion queue and address vector per connect_channels() call and rank (the
// OfiJob); addresses are exchanged over MPI when the job is prepared, with the provider every rank
// chose (ofi_logic.h's choose_ofi_endpoint; they must agree). Per directed channel the receiver
// owns `depth` slots and the sender fills at most `depth` ahead of its credits (the channel
// skeleton is transports/net/credit_channel.h's, shared with ib; this transport supplies the writes):
//   rma     the receiver registers its slots for remote writes and sends the sender their key and
//           address over MPI; a posted slot goes as one fi_writedata into the receiver's slot of
//           the same index, its remote CQ data naming the receiver's channel and the slot;
//   tagged  (providers without RMA, or --ofi-protocol tagged) the receiver keeps one tagged receive
//           posted into each free slot; a posted slot goes as one fi_tsend tagged with the sender,
//           the channel tag and the slot, so that it lands straight in that slot.
// The receiver returns credits as 8-byte tagged messages carrying the count of slots released.
// The mode and memory-registration bits the provider demands are honoured as plan_ofi() says.
//
// Zero-copy ends (channel.h's direct(), for the GPU net proxy): where a request gives the caller's
// slots, those are registered instead of the channel's own (GPU memory with FI_HMEM where
// slots_gpu is set); sends go straight from the caller's bytes, receives land in the caller's slot
// of the next index, as for ib (ib_transport.h).
//
// Failures: a failed completion is Error(runtime) "ofi (<provider>): <operation> to rank R (host
// H) failed: <fi_strerror> (provider: <its text>): <meaning>", which ends the run with exit code 6;
// a peer that dies while this rank only waits for it is reported by the waiting side's deadline
// (exit code 5) where the provider cannot tell (shm).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "topologies/layout.h"
#include "transports/connect.h"
#include "transports/ofi/ofi_logic.h"

namespace ccbench {

// The ofi entry of cpu_transports(); never chosen by "auto".
TransportOps ofi_transport_ops();

// The options every ofi channel of this process uses (validated; Error(usage) otherwise). Set
// before connect_channels(); the defaults of OfiOptions otherwise.
void set_ofi_options(const OfiOptions& options);
const OfiOptions& ofi_options();

// Why ofi cannot run in this build (built without libfabric), or nullopt.
std::optional<std::string> ofi_unavailable_reason();

// What this rank would use for channels of `slot_bytes` between the ranks of `layout`: the
// provider, domain and protocol as "ofi:<provider>:<protocol> on domain D" is label + domain.
// Throws what choose_ofi_endpoint() and plan_ofi() throw (Error(usage) for names that do not
// exist, Error(precondition) for what cannot run here). Not collective: harnesses agree on the
// outcome, as they do for any start-up step, before measuring.
struct OfiSelection {
  std::size_t entry = 0;  // its index among what fi_getinfo offers
  OfiEndpointInfo info;
  OfiPlan plan;
  std::string label;  // "ofi:tcp;ofi_rxm:rma"
};
OfiSelection select_ofi(const RankLayout& layout, std::size_t slot_bytes, bool hmem = false);

// GPU ranks: why this rank's net FIFO slots cannot live in the GPU memory of `cuda_device` with the
// chosen provider (no CUDA in the build, --gpudirect off, a GPU without GPUDirect RDMA flushes, no
// FI_HMEM endpoint of that provider), or nullopt when they can. Pinned host memory then holds them.
std::optional<std::string> ofi_hmem_unavailable_reason(const RankLayout& layout, int cuda_device);
// GPU ranks over ofi, at start-up (after select_ofi() succeeded on every rank): decides where this
// rank's net FIFO slots live (GPU memory of `cuda_device` where ofi_hmem_unavailable_reason() has
// none; the jobs then open FI_HMEM endpoints) and remembers the provider for the label.
void prepare_ofi_gpu(const RankLayout& layout, int cuda_device);
// The CUDA device whose memory this process's ofi channels register, or -1 (host memory only).
int ofi_hmem_device();
// The GPU rows' transport: "ofi:tcp;ofi_rxm:host" (slots staged in pinned host memory) or
// "ofi:efa:hmem" (in GPU memory); "ofi:?" before prepare_ofi_gpu().
std::string ofi_gpu_label(bool hmem);

// For an early end (JobGuard::attach): a process ending without closing its endpoints (MPI_Abort,
// _exit) would leave shm's regions in /dev/shm (fabric.h: unlink_ofi_shm_regions); removes them and
// says so, one line per file. Nothing where no shm endpoint is open, or without libfabric. Any thread.
std::vector<std::string> remove_ofi_shm_regions();

// `ccbench topo`: the libfabric library and every provider and domain offering reliable-datagram
// endpoints on this host, with their protocol (rma or tagged) and the mode and memory-registration
// bits they demand; {"available": false, "reason"} without libfabric.
nlohmann::ordered_json ofi_discovery();

}  // namespace ccbench
