#pragma once
// What the ring and tree kernels over FIFO connections share (fifo_ring.cuh, fifo_tree.cuh: NCCL's
// "simple" protocol): one block per channel moves one slot per step. A sender waits for a free
// slot (head), writes the slot in the receiver's memory and publishes it (tail, release at system
// scope); the receiver waits for the tail, reads and frees the slot (head). Counters only grow and
// persist across launches in each rank's state memory, so the kernels also run under CUDA-graph
// replay.
#include <cuda_runtime.h>

#include "collectives/gpu/device.cuh"

namespace ccbench::gpu::fifo {

// Host side: whether a buffer given to a launch is off a 16-byte boundary, so that the kernel
// instantiated for misaligned buffers runs (reduce_copy's kShift).
inline bool misaligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kPackBytes != 0; }

// Per-block view of its connections; thread 0 owns the counters.
struct BlockFifo {
  std::uint64_t sent = 0, received = 0;
};

// Thread 0 waits for a free slot on `s` and/or data on `r`; false on timeout (every thread).
__device__ __forceinline__ bool acquire(const SendConn* s, std::uint64_t sent, const RecvConn* r,
                                        std::uint64_t received, const WaitLimits& w) {
  __shared__ int ok;
  if (threadIdx.x == 0) {
    ok = 1;
    if (s && sent + 1 > kFifoSlots) ok = wait_at_least(s->head, sent + 1 - kFifoSlots, w, kWaitSlot, s->peer);
    if (ok && r) ok = wait_at_least(r->tail, received + 1, w, kWaitData, r->peer);
  }
  __syncthreads();
  return ok;
}

// Thread 0, before publishing step `sent` of `bytes`: its size for a proxy that sends only those.
__device__ __forceinline__ void put_size(const SendConn* s, std::uint64_t sent, std::size_t bytes) {
  if (s->sizes) s->sizes[sent % kFifoSlots] = bytes;
}

// After the data moved: publish the sent slot (`bytes` of it) and free the received one.
__device__ __forceinline__ void publish(const SendConn* s, std::uint64_t& sent, std::size_t bytes, const RecvConn* r,
                                        std::uint64_t& received) {
  __syncthreads();
  if (threadIdx.x == 0) {
    if (s) put_size(s, sent, bytes);
    if (s) st_release_sys(s->tail, ++sent);
    if (r) st_release_sys(r->head, ++received);
  } else {
    if (s) ++sent;
    if (r) ++received;
  }
}

__device__ __forceinline__ char* slot_of(char* base, std::uint64_t step, std::size_t slot_bytes) {
  return base + (step % kFifoSlots) * slot_bytes;
}
__device__ __forceinline__ const char* slot_of(const char* base, std::uint64_t step, std::size_t slot_bytes) {
  return base + (step % kFifoSlots) * slot_bytes;
}

}  // namespace ccbench::gpu::fifo
