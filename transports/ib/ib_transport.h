#pragma once
// The `ib` CPU transport: channels (transports/channel.h) over RDMA RC queue pairs.
//
// Per directed channel: the receiver registers `depth` slots of slot_bytes for remote writes; the
// sender registers its own `depth` staging slots. Each posted slot goes as RDMA WRITEs of at most
// IbOptions::chunk_bytes into the receiver's slot of the same index, the last one WITH_IMM
// carrying the length; slot k travels on QP k mod qps_per_peer. The receiver returns one credit
// (a zero-byte SEND_WITH_IMM) per released slot; the sender fills at most `depth` slots ahead of
// the credits (CreditWindow), and reuses a slot only once its own writes have completed, in post
// order (InOrderCompletions): the channel skeleton is transports/net/credit_channel.h's, shared
// with ofi; this transport supplies the verbs. A failed completion is Error(runtime) naming the operation, the
// peer, ibv_wc_status_str and what it usually means (classify_completion), which ends the run
// with exit code 6.
//
// Zero-copy ends (channel.h's direct(), for the GPU net proxy): where a request gives the
// caller's slots (ChannelRequest::slots), those are the registered memory instead of the
// channel's own — host memory, or GPU memory through a dma-buf (gpu_memory.h) where slots_gpu is
// set. A sender's try_post_from() writes straight from the caller's bytes into the peer's slot of
// the next index; a receiver's try_receive_into() must name the slot the peer wrote (the next
// one), and returns once its WRITE_WITH_IMM has completed (after flushing the NIC's writes for
// the GPU where the slots are GPU memory); its credit goes back on release(). sent() counts the
// posts whose writes have completed, in post order.
//
// Set-up over MPI (connect.cpp's phases): create_recv registers memory, creates the QPs, posts
// the receives and sends its connection data (ib_logic.h's blob) to the sender; attach_send
// receives it, creates its own QPs, sends its data back and brings its QPs to RTS; connected
// receives the sender's data and brings the receiver's QPs to RTS. Data flows only after
// connect_channels() has returned on every rank, so no write reaches a QP before RTR.
#include <optional>
#include <string>

#include "transports/connect.h"
#include "transports/ib/ib_logic.h"

namespace ccbench {

// The ib entry of cpu_transports(); never chosen by "auto" for CPU collectives.
TransportOps ib_transport_ops();

// The options every ib channel of this process uses (validated; Error(usage) otherwise). Set
// before connect_channels(); the defaults of IbOptions otherwise.
void set_ib_options(const IbOptions& options);
const IbOptions& ib_options();

// Why `ib` cannot run on this host (built without ibverbs; no device; no active port matching
// the options), or nullopt when it can.
std::optional<std::string> ib_unavailable_reason();
// Collective over `comm` (described by `layout`): why ib cannot run on some rank (this rank's
// reason where it has one, else "rank R (host H) cannot use RDMA" for the first rank that has),
// or nullopt when every rank can.
std::optional<std::string> agreed_ib_unavailable_reason(MPI_Comm comm, const RankLayout& layout);

}  // namespace ccbench
