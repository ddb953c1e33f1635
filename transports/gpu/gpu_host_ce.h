#pragma once
// host (copy engine): the `ce` halves of a GPU `host` connection (host_copy.h). The kernel of a
// ce half uses a FIFO in its own GPU memory, and a CPU proxy thread of its rank moves each step
// between that FIFO and the shared host FIFO with cudaMemcpyAsync (FifoStage, fifo_stage.h):
//   receive (ce): the sender (sm or ce) fills the shared host slots as always and writes each
//     step's byte count beside the host tail; the proxy copies those bytes host -> device into
//     the GPU slot the kernel has freed (its head), publishes the GPU FIFO's tail once the copy
//     has completed, and then frees the host slot (the sender's head).
//   send (ce): the kernel writes its GPU FIFO and each step's byte count; the proxy copies those
//     bytes device -> host into the receiver's shared host slot once the receiver has freed it
//     (the host head), publishes the host tail (and the step's size, where the receiver is ce
//     too) once the copy has completed, and then frees the GPU slot (the kernel's head).
// Every counter the kernel and the proxy share is in mapped pinned host memory: the kernel
// release-stores at system scope, the proxy acquire-loads and release-stores (host_flags.h).
// A copy completes when its event does (cudaEventQuery, never a blocking wait), so one slow
// FIFO stalls no other. The proxy only watches counters, so CUDA-graph replays work as eager
// launches do. Each FIFO has its own stream (cudaStreamNonBlocking: never ordered behind the
// kernels) and an event per slot.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transports/gpu/fifo_stage.h"
#include "transports/gpu/host_flags.h"
#include "transports/gpu/proxy_threads.h"

namespace ccbench {

// One FIFO's pointers in the address space of its user.
struct FifoPointers {
  char* slots = nullptr;
  volatile std::uint64_t* tail = nullptr;
  volatile std::uint64_t* head = nullptr;
  volatile std::uint64_t* sizes = nullptr;  // kFifoSlots byte counts
};

// The GPU-side FIFOs of one ce half of this rank: slots in this GPU's memory, each FIFO's tail,
// head and sizes on lines of their own in mapped pinned host memory, zeroed.
class DeviceFifos {
 public:
  DeviceFifos(std::size_t fifos, std::size_t slot_bytes);
  ~DeviceFifos();
  DeviceFifos(const DeviceFifos&) = delete;
  DeviceFifos& operator=(const DeviceFifos&) = delete;
  FifoPointers kernel(int fifo) const;  // what the kernel addresses (device pointers)
  FifoPointers proxy(int fifo) const;   // the same counters at their host addresses; GPU slots

 private:
  static constexpr std::size_t kLine = 128;  // counters of different writers never share a line
  static_assert(kLine % kHostFlagAlign == 0, "counters lie kLine apart: each must stay aligned for atomic_ref");
  FifoPointers at(int fifo, char* counters) const;
  void release();
  std::size_t fifos_, slot_;
  char* slots_ = nullptr;
  char* counters_host_ = nullptr;
  char* counters_device_ = nullptr;
};

class HostCeProxy {
 public:
  // Starts a proxy thread for the receive stages (host -> device) and one for the send stages
  // (device -> host) where there are any, so one direction's copies never wait behind the
  // other's, on `device`.
  HostCeProxy(int device, std::size_t slot_bytes, const std::vector<StageEnds>& recvs,
              const std::vector<StageEnds>& sends);
  ~HostCeProxy();  // stops the threads, then waits for the copies in flight
  HostCeProxy(const HostCeProxy&) = delete;
  HostCeProxy& operator=(const HostCeProxy&) = delete;
  // Rethrows the first error of a proxy thread (a failed copy, naming the peer), if any.
  void check() const { threads_.check(); }

 private:
  using Stages = std::vector<std::unique_ptr<FifoStage>>;
  void start(int device, Stages& stages);
  Stages recvs_, sends_;
  ProxyThreads threads_;  // after the stages: stopped before they go
};

}  // namespace ccbench
