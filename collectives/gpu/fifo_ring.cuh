#pragma once
// Ring kernels over FIFO connections (fifo_device.cuh): all-reduce, all-gather, reduce-scatter,
// and reduce as a chain toward the root. Each variant is instantiated in a file of its own, so
// that they compile in parallel: for aligned buffers in fifo_ring.cu, for misaligned ones
// (reduce_copy's kShift) in fifo_ring_shift.cu.
#include <cuda_runtime.h>

#include "collectives/gpu/fifo_device.cuh"
#include "collectives/schedules/chain.h"
#include "collectives/schedules/ring.h"

namespace ccbench::gpu::fifo {

using schedule::Piece;
using schedule::RingOp;

// One ring step on `n` elements: `in` and `out` are this rank's input and output for the piece.
template <typename T, bool kShift>
__device__ __forceinline__ bool ring_step(RingOp op, const RingParams& p, const SendConn& sc, const RecvConn& rc,
                                          BlockFifo& f, const T* in, T* out, std::size_t n) {
  const bool sends = schedule::ring_op_sends(op);
  const bool recvs = schedule::ring_op_receives(op);
  if (!acquire(sends ? &sc : nullptr, f.sent, recvs ? &rc : nullptr, f.received, p.limits)) return false;
  void* sslot = sends ? slot_of(sc.slots, f.sent, p.slot_bytes) : nullptr;
  const void* rslot = recvs ? slot_of(rc.slots, f.received, p.slot_bytes) : nullptr;
  const ReduceOp rop = p.op;
  switch (op) {
    case RingOp::send: reduce_copy<T, 1, 1, kShift>(rop, false, p.avg_divisor, {in}, {sslot}, n); break;
    case RingOp::recv_reduce_send:
      reduce_copy<T, 2, 1, kShift>(rop, false, p.avg_divisor, {rslot, in}, {sslot}, n);
      break;
    case RingOp::recv_reduce_copy_send:
      reduce_copy<T, 2, 2, kShift>(rop, true, p.avg_divisor, {rslot, in}, {out, sslot}, n);
      break;
    case RingOp::recv_reduce_copy: reduce_copy<T, 2, 1, kShift>(rop, true, p.avg_divisor, {rslot, in}, {out}, n); break;
    case RingOp::copy_send:
      if (in == out) reduce_copy<T, 1, 1, kShift>(rop, false, p.avg_divisor, {in}, {sslot}, n);
      else reduce_copy<T, 1, 2, kShift>(rop, false, p.avg_divisor, {in}, {out, sslot}, n);
      break;
    case RingOp::recv_copy_send:
      reduce_copy<T, 1, 2, kShift>(rop, false, p.avg_divisor, {rslot}, {out, sslot}, n);
      break;
    case RingOp::recv: reduce_copy<T, 1, 1, kShift>(rop, false, p.avg_divisor, {rslot}, {out}, n); break;
  }
  publish(sends ? &sc : nullptr, f.sent, n * sizeof(T), recvs ? &rc : nullptr, f.received);
  return true;
}

// Step s of the collectives that move whole blocks (all-gather, reduce-scatter, reduce).
__device__ __forceinline__ schedule::RingStep block_step(const RingParams& p, int s) {
  if (p.kind == RingKind::allgather) return schedule::ring_allgather_step(p.nranks, p.pos, s);
  if (p.kind == RingKind::reduce) return {schedule::chain_reduce_op(p.nranks, p.pos, p.root_pos), 0};
  return schedule::ring_reducescatter_step(p.nranks, p.pos, s);
}

template <typename T, bool kShift>
__global__ void __launch_bounds__(kThreads) ring_kernel(RingParams p) {
  const int c = static_cast<int>(blockIdx.x);
  const SendConn sc = p.send_conns[c];
  const RecvConn rc = p.recv_conns[c];
  BlockFifo f;
  f.sent = *sc.step;
  f.received = *rc.step;
  const int n = p.nranks;
  const std::size_t align = kPackBytes / sizeof(T);
  const std::size_t slice = p.slot_bytes / sizeof(T);
  const T* in = static_cast<const T*>(p.send);
  T* out = static_cast<T*>(p.recv);
  bool ok = true;

  if (p.kind == RingKind::allreduce) {
    // NCCL's loop: the channel's range in loops of n chunks of at most one slot.
    const Piece range = schedule::block_range(p.count, p.channels, c, align);
    const std::size_t loops = schedule::ring_loops(range.count, n, slice);
    for (std::size_t loop = 0; ok && loop < loops; ++loop) {
      for (int s = 0; ok && s < schedule::ring_allreduce_steps(n); ++s) {
        const schedule::RingStep st = schedule::ring_allreduce_step(n, p.pos, s);
        const Piece pc = schedule::ring_piece(range.count, n, slice, align, loop, st.chunk);
        if (pc.count == 0) continue;
        const std::size_t off = range.offset + pc.offset;
        ok = ring_step<T, kShift>(st.op, p, sc, rc, f, in + off, out + off, pc.count);
      }
    }
  } else {
    // All-gather / reduce-scatter: chunk k is the block of `count` elements of the rank at ring
    // position k; the channel moves its part of every block, one slot at a time. Reduce: one step
    // per slice, the op of this rank's place on the chain toward the root, on the one block.
    const Piece range = schedule::block_range(p.count, p.channels, c, align);
    const std::size_t loops = schedule::div_up(range.count, slice);
    const bool gather = p.kind == RingKind::allgather;
    const int steps = gather                       ? schedule::ring_allgather_steps(n)
                      : p.kind == RingKind::reduce ? 1
                                                   : schedule::ring_reducescatter_steps(n);
    for (std::size_t loop = 0; ok && loop < loops; ++loop) {
      const std::size_t first = range.offset + loop * slice;
      const std::size_t m = range.count - loop * slice < slice ? range.count - loop * slice : slice;
      for (int s = 0; ok && s < steps; ++s) {
        const schedule::RingStep st = block_step(p, s);
        const std::size_t block =
            p.kind == RingKind::reduce ? 0 : static_cast<std::size_t>(p.ring_ranks[st.chunk]) * p.count;
        // All-gather reads its own input and writes block `chunk` of the output; reduce-scatter
        // reads block `chunk` of its input and writes its output.
        const T* src = gather ? in + first : in + block + first;
        T* dst = gather ? out + block + first : out + first;
        ok = ring_step<T, kShift>(st.op, p, sc, rc, f, src, dst, m);
      }
    }
  }
  if (threadIdx.x == 0) {
    *sc.step = f.sent;
    *rc.step = f.received;
  }
}

// Launches ring_kernel<T, kShift> for p.dtype; CUDA's launch error.
template <bool kShift>
int launch_ring_variant(const RingParams& p, cudaStream_t s) {
  dispatch_type(p.dtype, [&](auto v) { ring_kernel<decltype(v), kShift><<<p.channels, kThreads, 0, s>>>(p); });
  return cudaGetLastError();
}

// The two variants' launchers, each defined in its own file.
int launch_ring_aligned(const RingParams& p, cudaStream_t s);  // fifo_ring.cu
int launch_ring_shifted(const RingParams& p, cudaStream_t s);  // fifo_ring_shift.cu

}  // namespace ccbench::gpu::fifo
