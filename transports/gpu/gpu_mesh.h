#pragma once
// FIFO connections between GPU ranks over the GPU transports (gpu_transport.h), one transport
// per pair as planned by plan_gpu_paths (gpu_paths.h). Every rank has `fifos` incoming FIFOs
// (slots + tail, written by their sender) and `fifos` outgoing heads (written by the receivers
// of its sends) in each transport's region it uses. Which id a connection uses is a pure
// function of the schedule, the same on both sides.
#include <mpi.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "transports/gpu/gpu_conn.h"
#include "transports/gpu/gpu_host_ce.h"
#include "transports/gpu/gpu_net.h"
#include "transports/gpu/gpu_paths.h"
#include "transports/gpu/gpu_transport.h"
#include "transports/gpu/host_copy.h"
#include "transports/gpu/host_flags.h"

namespace ccbench {

// Collective: CCBENCH_GPU_HOST_RECV and CCBENCH_GPU_HOST_SEND (host_copy.h) as every rank has
// them: the modes where either is set, nullopt where neither is. Error(usage) on every rank
// unless every rank has the same.
std::optional<HostCopyModes> agreed_host_copy(MPI_Comm comm);

class GpuFifoMesh {
 public:
  // Collective over `comm` (described by `paths`): sets up a region per transport in use and
  // exchanges the connection blobs with MPI_Allgather. A peer's memory is mapped only when
  // send() or recv() first names it, so a ring maps its two neighbours and a tree its parents
  // and children, never every rank of the node (CUDA's peer limit; pinned host memory).
  // `steps` is device memory of 2 * fifos zeroed counters owned by the caller. Host connections
  // use `host_copy` where given (the same on every rank); otherwise, where a pair uses host,
  // agreed_host_copy's forced modes, or sm for both halves.
  GpuFifoMesh(MPI_Comm comm, const GpuPaths& paths, int fifos, std::size_t slot_bytes, std::uint64_t* steps,
              std::optional<HostCopyModes> host_copy = std::nullopt);
  // Collective unless an exception is in flight: stops the proxies, unmaps every peer, then a
  // barrier, and only then frees this rank's regions (a peer's kernel may address them until it
  // has unmapped them).
  ~GpuFifoMesh();
  // Send through the peer's incoming FIFO `peer_fifo`; the peer frees slots in our head `my_out`.
  // Over net, and over host with a ce send half: through our staging FIFO `my_out`, which the
  // proxy drains. Call it once per FIFO.
  gpu::SendConn send(int peer, int peer_fifo, int my_out);
  // Receive through our incoming FIFO `my_fifo`; we free slots in the peer's head `peer_out`.
  // Over net, and over host with a ce receive half: the proxy fills it and reads our head.
  // Call it once per FIFO.
  gpu::RecvConn recv(int peer, int my_fifo, int peer_out);
  // Collective, after every send() and recv(): agrees that every rank mapped its peers (the
  // barrier after which no rank uses or frees memory a peer has not mapped, and the regions'
  // names go), starts the host copy-engine proxy where this rank has ce halves, connects the net FIFOs (over the plan's
  // net backend, tcp or ib) and starts their proxy where a pair uses net.
  void finish(const RankLayout& layout, std::chrono::milliseconds timeout);
  // Rethrows the proxies' error, if any.
  void check() const;
  // For the `algorithm` column: which halves of host connections the copy engines move ("" when
  // none; host_copy_note).
  std::string staging_note() const { return host_copy_note(host_copy_); }
  // For the `transport` column: the plan's label, with net/ib marked ":gpudirect" where this
  // rank's net FIFO slots are in GPU memory and ":host" where they are staged in pinned host
  // memory (GPUDirect off or unavailable: gpudirect_unavailable_reason()); net/ofi as
  // "net/ofi:<provider>:hmem" or ":host" (ofi_gpu_label()).
  std::string transport_label(const GpuPaths& paths) const;

 private:
  static constexpr std::size_t kLine = 128;  // flags of different writers never share a line
  static_assert(kLine % kHostFlagAlign == 0, "FIFO counters lie kLine apart: each must stay aligned for atomic_ref");
  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  // One transport's region and what mapping peers into it needs.
  struct Linked {
    const GpuTransport* transport = nullptr;
    std::unique_ptr<GpuRegion> region;  // null where this rank does not use the transport
    std::vector<ConnectBlob> blobs;     // every rank's, for mapping on first use
    std::vector<bool> mapped;
    std::exception_ptr error;  // the first mapping that failed, agreed in finish()
  };
  Linked open_transport(const GpuPaths& paths, const GpuTransport& t, std::size_t bytes);
  GpuRegion& map(Linked& l, int peer);
  void check_same_layout() const;
  void finish_mapping(Linked& l);
  gpu::SendConn host_send(int peer, int peer_fifo, int my_out);
  gpu::RecvConn host_recv(int peer, int my_fifo, int peer_out);
  std::size_t data(int f) const { return idx(f) * gpu::kFifoSlots * slot_; }
  std::size_t tail(int f) const { return fifos_ * gpu::kFifoSlots * slot_ + idx(f) * kLine; }
  std::size_t head(int f) const { return fifos_ * gpu::kFifoSlots * slot_ + fifos_ * kLine + idx(f) * kLine; }
  // net, and host with a ce receive half: each FIFO's step sizes, after the heads.
  std::size_t sizes(int f) const { return fifos_ * gpu::kFifoSlots * slot_ + 2 * fifos_ * kLine + idx(f) * kLine; }
  int rank_ = 0;
  std::size_t fifos_, slot_;
  std::uint64_t* steps_;
  std::vector<std::string> path_of_;  // transport of each peer
  Linked p2p_, host_;                 // this rank's regions (null when unused)
  // host's ce halves: the kernels' FIFOs in GPU memory (null for sm halves), the stages the
  // proxy moves, the proxy.
  HostCopyModes host_copy_;
  int device_ = 0;
  std::unique_ptr<DeviceFifos> ce_recv_fifos_, ce_send_fifos_;
  std::vector<StageEnds> ce_recvs_, ce_sends_;
  std::unique_ptr<HostCeProxy> ce_proxy_;
  // net: pinned host memory of this rank only, incoming FIFOs then staging FIFOs (same layout,
  // plus a line of step sizes per FIFO). Over ib with GPUDirect, the slots the kernels and the
  // NIC use are in GPU memory instead (net_gpu_slots_, incoming then staging; the host slots
  // stay unused) and the counters stay in host memory, where the proxy reads and writes them.
  // FIFO f's slots (staging or incoming) as the proxy or the kernels address them (the same
  // GPU memory for both under GPUDirect: the proxy only hands its address to the NIC).
  char* net_slots(bool staging, int f, bool for_proxy) const;
  MPI_Comm comm_;
  bool uses_net_ = false;
  NetBackend net_backend_;
  std::size_t net_half_ = 0;
  char* net_host_ = nullptr;
  char* net_device_ = nullptr;
  char* net_gpu_slots_ = nullptr;
  std::vector<NetFifo> net_sends_, net_recvs_;
  std::unique_ptr<NetProxy> proxy_;
};

}  // namespace ccbench
