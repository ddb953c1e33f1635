#pragma once
// Collective set-up of CPU channels: every rank lists the channels it needs, and
// connect_channels() builds them with a transport chosen per pair of ranks.
//
// Transports form an ops table probed in order, as NCCL's: the first automatic one whose
// can_connect() accepts a pair wins under "auto" (shm within a node, mpi otherwise); tcp is used
// only when forced. A transport the user forces must connect every pair it is asked for.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "topologies/layout.h"
#include "transports/channel.h"

namespace ccbench {

// One directed channel seen from this rank: send=true sends to `peer`, send=false receives from
// `peer`. A send request (peer B, tag t) on rank A must be matched by exactly one receive request
// (peer A, tag t) on rank B; unmatched requests end set-up with Error(timeout) naming them.
// Tags are in [0, 2^20); (peer, tag, send) must be unique on a rank.
struct ChannelRequest {
  int peer = -1;
  int tag = 0;
  bool send = false;
  // Optional: the caller's own slot memory (depth x slot_bytes, contiguous, slot i at
  // slots + i * slot_bytes), for zero-copy ends that move bytes in place: ib registers it once, so
  // that sends go out from it and the peer's writes land in it (channel.h's direct()). In the GPU
  // memory of CUDA device `slots_gpu` where that is >= 0 (ib: GPUDirect RDMA), else host memory.
  // Transports that copy (shm, mpi, tcp) ignore it; it must outlive the channel.
  char* slots = nullptr;
  int slots_gpu = -1;
};

struct ChannelOptions {
  size_t slot_bytes = 256 * 1024;  // > 0, a multiple of 64; equal on every rank
  int depth = 4;                   // slots per channel, >= 1; equal on every rank
  std::string transport = "auto";  // auto, shm, mpi, tcp, ib or ofi (core/transport_names.h)
  std::chrono::milliseconds timeout{std::chrono::minutes(1)};  // bound of every set-up wait
};

// What a receiving end tells its sender so that the sender can attach (sent as bytes).
struct ChannelSetup {
  char shm_name[64] = {};           // shm: the segment's name
  char tcp_address[64] = {};        // tcp: the numeric address the receiver listens on
  std::uint16_t tcp_port = 0;       // tcp: its port
  std::uint8_t tcp_token[16] = {};  // tcp: the job token the sender must present
};

// State a transport shares among the channels of one connect_channels() call on one rank (tcp:
// the job token, the local address, the channels to progress together). Owned by the ChannelSet,
// destroyed after its channels.
class TransportJob {
 public:
  virtual ~TransportJob() = default;
  // What ChannelSet::label() says for this transport, the same on every rank ("ofi:shm:rma"), or
  // "" for the transport's name.
  virtual std::string label() const { return {}; }
};

// What every set-up call of a transport is given.
struct SetupArgs {
  MPI_Comm comm = MPI_COMM_NULL;       // the ChannelSet's private communicator
  const RankLayout* layout = nullptr;  // describes comm
  int peer = -1;                       // the request's peer and tag (prepare: -1 and 0)
  int tag = 0;
  const ChannelOptions* options = nullptr;
  std::chrono::steady_clock::time_point deadline;  // bound of every set-up wait
  TransportJob* job = nullptr;                     // what prepare() returned, or nullptr
  char* slots = nullptr;                           // the request's caller memory, if any
  int slots_gpu = -1;
};

// "rank 3 (host h2)": the peer of `a` as set-up errors name it.
std::string peer_label(const SetupArgs& a);

// A transport as an ops table entry. Set-up calls run on the rank named, in this order:
// prepare (every rank, if any rank uses the transport), create_recv (receiver), attach_send
// (sender, with the receiver's ChannelSetup), connected (receiver, once every rank has attached).
// Each throws Error on failure; errors are agreed among the ranks after each phase.
struct TransportOps {
  std::string_view name;
  bool automatic;  // whether "auto" may choose it
  // Whether this transport can carry data from rank `from` to rank `to`; `why` says why not.
  bool (*can_connect)(const RankLayout& layout, int from, int to, std::string* why);
  // Collective over args.comm (every rank calls it); may be null. Its result is args.job of
  // the calls below on this rank.
  std::unique_ptr<TransportJob> (*prepare)(const SetupArgs& args);
  std::unique_ptr<RecvChannel> (*create_recv)(const SetupArgs& args, ChannelSetup* setup);
  std::unique_ptr<SendChannel> (*attach_send)(const SetupArgs& args, const ChannelSetup& setup);
  // May wait, bounded by args.deadline, for what the senders did in attach_send.
  void (*connected)(const SetupArgs& args, RecvChannel& channel);
};
// The entry of a transport this build left out (ib without ibverbs, ofi without libfabric): it
// connects no pair, and `why()` (never nullopt) says why.
template <std::optional<std::string> (*why)()>
TransportOps left_out_transport(std::string_view name) {
  return {name,
          false,
          [](const RankLayout&, int, int, std::string* reason) {
            if (reason) *reason = *why();
            return false;
          },
          nullptr,
          nullptr,
          nullptr,
          nullptr};
}

// Collective over `comm` (described by `layout`): the address this rank's tcp sockets use
// (tcp_local_address in transports/cpu/tcp.h), after every rank's interface addresses are exchanged
// where the ranks span hosts; every wait bounded by `deadline` (Error(timeout) naming what it
// waited for, `timeout` being the bound it was given). Throws what tcp_local_address throws, after
// the exchange, so no rank waits in it for one that gave up.
std::string tcp_choose_address(MPI_Comm comm, const RankLayout& layout, std::chrono::steady_clock::time_point deadline,
                               std::chrono::milliseconds timeout);

// Every CPU transport in probe order.
const std::vector<TransportOps>& cpu_transports();
// "auto, shm, mpi, tcp, ib" (core/transport_names.h).
std::string valid_cpu_transports();

// The channels of one connect_channels() call. Owns them and the private communicator the
// MPI channels use; destroy it before MPI_Finalize (afterwards it only unmaps memory).
class ChannelSet {
 public:
  ChannelSet() = default;
  ~ChannelSet();
  ChannelSet(const ChannelSet&) = delete;
  ChannelSet& operator=(const ChannelSet&) = delete;

  size_t size() const { return sends_.size(); }
  // The channel of request i (request order); throws Error(runtime) if request i is of the other
  // direction.
  SendChannel& send(size_t i) const;
  RecvChannel& recv(size_t i) const;
  // The transports used by any rank of the communicator: "shm", "mpi", "shm+mpi", "tcp",
  // "ofi:tcp;ofi_rxm:rma" (TransportJob::label), or "none" when no rank has a channel. The same on
  // every rank.
  const std::string& label() const { return label_; }

 private:
  friend class ChannelConnector;                     // connect_channels() fills it
  MPI_Comm comm_ = MPI_COMM_NULL;                    // duplicate of the caller's communicator, for MPI channels
  std::vector<std::unique_ptr<SendChannel>> sends_;  // null for receive requests
  std::vector<std::unique_ptr<RecvChannel>> recvs_;  // null for send requests
  std::vector<std::unique_ptr<TransportJob>> jobs_;  // per transport; outlive the channels
  std::string label_;
};

// Builds the channels of `requests` (in request order). Collective over `comm`: every rank calls
// it, even with no requests. `layout` describes `comm`. Blocks until every rank has attached or
// options.timeout passes. Errors are agreed: when set-up fails on one rank (a forced transport
// that cannot connect a pair, /dev/shm full, mismatched geometry) every rank throws, with the
// failing rank's message:
//   Error(usage)         unknown transport name, malformed requests;
//   Error(precondition)  a forced transport that cannot connect a pair, resources missing;
//   Error(timeout)       a request without its match, or a rank that never arrives;
//   Error(runtime)       MPI and socket failures.
// With transport "tcp", CCBENCH_TCP_IF chooses the interface (transports/cpu/tcp.h); one that does not
// exist is Error(usage).
std::unique_ptr<ChannelSet> connect_channels(MPI_Comm comm, const RankLayout& layout,
                                             const std::vector<ChannelRequest>& requests,
                                             const ChannelOptions& options);

}  // namespace ccbench
