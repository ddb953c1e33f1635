#pragma once
// What the peer kernels (one-shot, two-shot, Bruck, barriers) address: the scratch regions
// (flags, LL buffers) of this rank and of the peers its kernel reaches and, once attached, their
// send and receive buffers, through CUDA IPC (transports/gpu/cuda_ipc.h); the table lives in device
// memory, null for a rank not mapped.
#include <mpi.h>

#include <memory>
#include <vector>

#include "collectives/gpu/cuda_resources.h"
#include "collectives/gpu/kernel_args.h"
#include "collectives/implementation.h"
#include "transports/gpu/cuda_ipc.h"

namespace ccbench::gpu {

class PeerState {
 public:
  // Collective over `comm`: maps the scratch regions of `peers` (ranks of `comm`, not this one:
  // other_ranks() for kernels that address every rank). A mapping refused on any rank is one
  // Error::agreed(precondition) on every rank, naming the rank and the peer.
  PeerState(MPI_Comm comm, std::size_t scratch_bytes, const std::vector<int>& peers);
  // Collective: maps the peers' send and/or receive buffers of the harness.
  void attach(const BufferSet& b, bool send, bool recv);
  // Collective: closes this rank's mappings of the peers' buffers, then a barrier: on return no
  // rank maps this rank's buffers any more, and the harness may free them. Nothing where nothing
  // is attached (the same on every rank).
  void detach();
  // Kernel parameters of one call: where its buffers lie in the attached ones.
  PeerParams params(const CallArgs& a, int rank, int nranks, int blocks, const WaitLimits& limits) const;
  // The parameters launch_barrier() reads (scratch table, epochs, rank, limits), with no call's
  // buffers: for callers whose buffers params() does not describe (a result inside the send buffer).
  PeerParams barrier_params(int rank, int nranks, const WaitLimits& limits) const;
  // Where `mine`, a pointer into this rank's attached send or receive buffer, lies in rank r's
  // (the same offset in the same buffer: every rank lays out a call alike; `mine` itself for this
  // rank). Fails when `mine` lies in neither buffer attached; a pointer one past the end (of a
  // zero-byte piece) counts as outside.
  char* peer_address(int r, const void* mine) const;
  // Rank r's attached receive buffer as this rank addresses it (host side).
  void* recv_of(int r) const { return table_.recv_of[r]; }

 private:
  void upload() { device_ = DeviceArray<PeerTable>(std::vector<PeerTable>{table_}); }
  MPI_Comm comm_;
  std::vector<int> peers_;
  IpcRegion scratch_;
  DeviceCounters epochs_;
  PeerTable table_{};
  DeviceArray<PeerTable> device_;
  BufferSet set_;
  std::unique_ptr<IpcBufferMap> send_, recv_;
};

}  // namespace ccbench::gpu
