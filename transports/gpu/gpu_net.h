#pragma once
// net: GPU FIFOs on each side, moved between nodes by CPU proxy threads of each rank over the
// zero-copy ends (channel.h's direct()) of a CPU channel transport, the backend:
//   tcp  slots in pinned host memory; the tcp transport's channels (transports/cpu/tcp.h: per-job
//        token, bounded lengths, the chosen interface), one TCP connection per FIFO.
//   ib   RC queue pairs (transports/ib/ib_transport.h) that register the FIFO slots themselves:
//        a step goes as RDMA WRITEs straight from the sender's staging slot into the receiver's
//        slot of the same index, the last WITH_IMM carrying its size; the receiver's tail is
//        published on that completion, and its credit goes back when the GPU frees the slot.
//        The slots are in GPU memory (GPUDirect RDMA, written by the NIC, flushed before tail)
//        where NetBackend::slots_gpu says so, else in pinned host memory.
//   ofi  libfabric (transports/ofi/ofi_transport.h): as ib, over any provider, the slots in GPU
//        memory where the provider takes it (FI_HMEM), else in pinned host memory.
// A ring of C channels has C connections per peer and direction; every slot of every connection
// can be in flight.
//
// The kernels see the FIFO contract of gpu_conn.h; only who writes the far counter differs:
//   sender GPU   writes its local staging slot, the step's size and tail; the proxy sends the
//                step's bytes straight from the staging slot (the tcp channel's zero-copy post)
//                and grants the slot back (head) once the socket has taken them.
//   receiver     the proxy reads the next message straight into the next GPU slot once the GPU
//                has freed it (its head), then publishes tail; when the GPU frees a slot, the
//                proxy releases the message, which grants the sender its credit back.
// Only the step's bytes travel; over tcp each crosses host memory once per side (the socket
// copies), over ib not at all beyond the NIC's own DMA.
// The channels have kFifoSlots slots, so the GPU slots themselves bound what is in flight.
// Proxy counters persist across launches as the GPU's step counters do (graph replays work).
// Errors in the proxy (a reset connection, a malformed message) are kept and rethrown by
// check(); the kernels waiting on it end by their own bounded waits.
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "topologies/layout.h"
#include "transports/connect.h"
#include "transports/gpu/host_flags.h"
#include "transports/gpu/proxy_threads.h"
#include "core/transport_names.h"

namespace ccbench {

// One FIFO as the proxy sees it: host pointers into pinned memory the GPU also addresses (the
// slots may be GPU memory instead: NetBackend::slots_gpu).
struct NetFifo {
  int peer = -1;
  int tag = 0;            // the receiver's FIFO id (same on both sides)
  char* slots = nullptr;  // kFifoSlots slots of the proxy's slot_bytes, contiguous
  volatile std::uint64_t* tail = nullptr;
  volatile std::uint64_t* head = nullptr;
  // Sends: the byte count of each slot's step (sizes[step % kFifoSlots]), written by the sender
  // before its tail; at most the slot size. Unused on receives.
  const volatile std::uint64_t* sizes = nullptr;
};

// I/O threads per rank: separate threads keep several streams moving at once.
// CCBENCH_GPU_NET_THREADS (1 to 64; its default and the measurement behind it: core/knob_table.h):
// Error(usage) naming a bad value.
int net_proxy_threads();

// What carries the FIFOs: the same on every rank.
struct NetBackend {
  std::string transport{name(Transport::tcp)};  // "tcp", "ib" (ib_options() configure it) or "ofi" (ofi_options())
  // ib, ofi: the CUDA device whose memory holds this rank's FIFO slots (GPUDirect RDMA; FI_HMEM), or
  // -1 for pinned host memory. tcp reads and writes the slots with the CPU: host memory only.
  int slots_gpu = -1;
};

class NetProxy {
 public:
  // Collective over `comm` (every rank calls it, with or without FIFOs): connects one channel of
  // `backend` per FIFO and starts the proxy threads. FIFOs are dealt to net_proxy_threads()
  // threads by tag, the same way on both sides (the variable must match on every rank); each
  // thread owns its own transport job (tcp: its token and sockets; ib: its device context and
  // completion queue) and channels. Error(precondition) where the backend cannot run (ib with
  // no usable RDMA port, the reason from ib_unavailable_reason()).
  NetProxy(MPI_Comm comm, const RankLayout& layout, std::size_t slot_bytes, std::vector<NetFifo> sends,
           std::vector<NetFifo> recvs, std::chrono::milliseconds timeout, const NetBackend& backend = {});
  ~NetProxy();  // stops and joins the threads, then closes the connections
  NetProxy(const NetProxy&) = delete;
  NetProxy& operator=(const NetProxy&) = delete;
  // Rethrows the first error of a proxy thread, if any.
  void check() const { threads_.check(); }

 private:
  struct Worker {
    std::vector<NetFifo> sends, recvs;
    std::vector<std::uint64_t> posted, granted;  // sends: steps posted, slots granted back (head)
    std::vector<std::uint64_t> received, freed;  // receives: steps published (tail), released
    std::unique_ptr<ChannelSet> channels;
  };
  bool move_sends(Worker& w);
  bool move_recvs(Worker& w);
  std::size_t slot_;
  std::vector<std::unique_ptr<Worker>> workers_;
  ProxyThreads threads_;  // after workers_: stopped before the channels go
};

}  // namespace ccbench
