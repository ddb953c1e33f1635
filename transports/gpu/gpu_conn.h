#pragma once
// The FIFO contract between our GPU kernels and every GPU transport (p2p, host, net). Plain data, no
// CUDA types: included by host code and kernels alike.
//
// A connection moves a stream of steps from a sender block to a receiver block through
// kFifoSlots slots of `slot_bytes`. `tail` and `head` are step counters that only grow (slot =
// step % kFifoSlots), so nothing is ever reset and CUDA-graph replays work:
//   sender:   wait head + kFifoSlots > step (a free slot); write slot; where `sizes` is set, write
//             the step's byte count to sizes[step % kFifoSlots]; release-store tail = step+1 at
//             system scope (after a block barrier, so every thread's stores are ordered before);
//   receiver: acquire-load tail > step; read the slot with volatile loads (never a stale L1 line);
//             release-store head = step+1.
// `tail` and the slots live on the receiver's side (its GPU memory for p2p, pinned host memory
// on its node for host); `head` lives on the sender's side. Every counter has its own 128-byte
// line. `step` is the block's own count, kept in its GPU memory between launches.
#include <cstdint>

namespace ccbench::gpu {

constexpr int kFifoSlots = 4;  // slots in flight per FIFO connection

// The send side of a FIFO connection from this rank to `peer`.
struct SendConn {
  char* slots;
  volatile std::uint64_t* tail;
  const volatile std::uint64_t* head;
  std::uint64_t* step;  // posted so far (our state memory)
  int peer;
  // The bytes of each slot's step, beside tail: set where a proxy sends only those (net), null
  // where the receiver reads the slot itself (p2p, host).
  volatile std::uint64_t* sizes = nullptr;
};

// The receive side: slots and tail on our side; head on the sender's.
struct RecvConn {
  const char* slots;
  const volatile std::uint64_t* tail;
  volatile std::uint64_t* head;
  std::uint64_t* step;  // consumed so far (our state memory)
  int peer;
};

}  // namespace ccbench::gpu
