#pragma once
// One hop of a GPU FIFO (gpu_conn.h) that a CPU proxy moves with asynchronous copies, from a
// source FIFO into a destination FIFO of the same kFifoSlots slots (pure: the copier is an
// interface, so the state machine runs on host memory in tests).
//
// Per step, in order:
//   1. the source's producer writes a slot (and its byte count where sizes are kept) and
//      publishes tail;
//   2. once tail shows the step and the consumer has freed the destination slot (its head), the
//      proxy starts the copy of the step's bytes (the whole slot where the source keeps no sizes);
//   3. once the copy has completed (never earlier), the proxy writes the step's size where the
//      destination keeps sizes, publishes the destination's tail, and frees the source slot (the
//      source's head): the copy no longer reads it.
// Counters only grow and the stage keeps its own counts, so launches and CUDA-graph replays of
// the kernels at either end continue where the last left off.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "transports/gpu/gpu_conn.h"

namespace ccbench {

// The asynchronous copies of one FIFO, one per slot: copy() starts the copy into `slot`,
// done() says whether that copy has completed. Both throw Error(runtime) on a failure.
class SlotCopier {
 public:
  virtual ~SlotCopier() = default;
  virtual void copy(int slot, void* dst, const void* src, std::size_t bytes) = 0;
  virtual bool done(int slot) = 0;
};

// The two FIFOs of a hop as the proxy's thread addresses them: counters in pinned host memory,
// slots wherever the copier reaches (GPU memory or pinned host memory).
struct StageEnds {
  int peer = -1;  // the rank at the other end of the connection, for messages
  // Source: its producer writes slots, sizes and tail; the proxy frees slots (head).
  const char* src_slots = nullptr;
  const volatile std::uint64_t* src_tail = nullptr;
  const volatile std::uint64_t* src_sizes = nullptr;  // each step's bytes; null: whole slots move
  volatile std::uint64_t* src_head = nullptr;
  // Destination: the proxy writes slots, sizes (where kept) and tail; its consumer frees slots.
  char* dst_slots = nullptr;
  volatile std::uint64_t* dst_tail = nullptr;
  volatile std::uint64_t* dst_sizes = nullptr;  // null: the consumer reads no sizes
  const volatile std::uint64_t* dst_head = nullptr;
};

class FifoStage {
 public:
  // Throws Error(runtime) naming the counter when one of the four counters is off the alignment
  // the CPU's atomic access needs (host_flags.h).
  FifoStage(const StageEnds& ends, std::size_t slot_bytes, std::unique_ptr<SlotCopier> copier);
  // One pass: publishes the copies that completed, in step order, then starts copies of the
  // published steps into the destination slots its consumer has freed. True when anything
  // moved. Throws Error(runtime) naming the peer when the source publishes a step larger than
  // a slot.
  bool advance();
  std::uint64_t started() const { return started_; }
  std::uint64_t published() const { return published_; }
  int peer() const { return ends_.peer; }

 private:
  bool publish_completed();
  bool start_copies();
  StageEnds ends_;
  std::size_t slot_;
  std::unique_ptr<SlotCopier> copier_;
  std::uint64_t started_ = 0, published_ = 0;
  std::uint64_t bytes_[gpu::kFifoSlots] = {};  // each started step's bytes, by slot
};

}  // namespace ccbench
