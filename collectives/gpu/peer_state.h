#pragma once
// What the peer kernels (one-shot, two-shot, Bruck, barriers) address: every rank's scratch
// region (flags, LL buffers) and, once attached, every rank's send and receive buffers through
// CUDA IPC; the table lives in device memory.
#include <mpi.h>

#include <memory>

#include "collectives/gpu/cuda_resources.h"
#include "collectives/gpu/kernel_args.h"
#include "collectives/implementation.h"
#include "transports/cuda_ipc.h"

namespace ccbench::gpu {

class PeerState {
 public:
  // Collective over `comm`.
  PeerState(MPI_Comm comm, std::size_t scratch_bytes);
  // Maps the harness's buffers of every rank (collective).
  void attach(const BufferSet& b, bool send, bool recv);
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
  IpcRegion scratch_;
  DeviceCounters epochs_;
  PeerTable table_{};
  DeviceArray<PeerTable> device_;
  BufferSet set_;
  std::unique_ptr<IpcBufferMap> send_, recv_;
};

}  // namespace ccbench::gpu
