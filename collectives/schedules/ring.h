#pragma once
// Ring schedules (pure, device-independent; usable in CUDA kernels). As NCCL's ring: the buffer
// is processed in loops of ranks x slice elements; within a loop each rank's data is split into
// `ranks` chunks and every step moves one chunk to the next rank on the ring.
#include <cstddef>
#include <cstdint>

#include "collectives/numeric.h"

namespace ccbench::schedule {

// What a rank does at one ring step with the chunk it names.
enum class RingOp : std::uint8_t {
  send,                   // send my input chunk
  recv_reduce_send,       // receive, reduce with my input chunk, send on
  recv_reduce_copy_send,  // receive, reduce, store into my output, send on
  recv_reduce_copy,       // receive, reduce, store into my output (reduce-scatter's last step)
  copy_send,              // copy my input chunk into my output and send it
  recv_copy_send,         // receive into my output and send on
  recv,                   // receive into my output
};

// What a step's op does, for every executor of the schedules (CPU ring, GPU FIFO kernels).
CCB_HD bool ring_op_receives(RingOp op) { return op != RingOp::send && op != RingOp::copy_send; }
CCB_HD bool ring_op_sends(RingOp op) { return op != RingOp::recv && op != RingOp::recv_reduce_copy; }
CCB_HD bool ring_op_reads_input(RingOp op) {
  return op == RingOp::send || op == RingOp::recv_reduce_send || op == RingOp::recv_reduce_copy_send ||
         op == RingOp::recv_reduce_copy || op == RingOp::copy_send;
}
CCB_HD bool ring_op_writes_output(RingOp op) { return op != RingOp::send && op != RingOp::recv_reduce_send; }
// The step that completes a reduction (avg divides there).
CCB_HD bool ring_op_finalizes(RingOp op) {
  return op == RingOp::recv_reduce_copy_send || op == RingOp::recv_reduce_copy;
}

struct RingStep {
  RingOp op;
  int chunk;  // which of the `ranks` chunks of the current loop
};

CCB_HD int mod_ranks(int x, int n) { return ((x % n) + n) % n; }

// All-reduce as reduce-scatter then all-gather: 2(n-1) steps, s in [0, 2n-2]; n >= 2.
// `pos` is this rank's position on the ring.
CCB_HD int ring_allreduce_steps(int n) { return 2 * n - 1; }
CCB_HD RingStep ring_allreduce_step(int n, int pos, int s) {
  if (s == 0) return {RingOp::send, mod_ranks(pos - 1, n)};
  if (s < n - 1) return {RingOp::recv_reduce_send, mod_ranks(pos - 1 - s, n)};
  if (s == n - 1) return {RingOp::recv_reduce_copy_send, pos};
  if (s < 2 * n - 2) return {RingOp::recv_copy_send, mod_ranks(pos - (s - n + 1), n)};
  return {RingOp::recv, mod_ranks(pos + 1, n)};
}

// Reduce-scatter: n steps, s in [0, n-1]; chunk c ends reduced in rank at position c.
CCB_HD int ring_reducescatter_steps(int n) { return n; }
CCB_HD RingStep ring_reducescatter_step(int n, int pos, int s) {
  if (s == 0) return {RingOp::send, mod_ranks(pos - 1, n)};
  if (s < n - 1) return {RingOp::recv_reduce_send, mod_ranks(pos - 1 - s, n)};
  return {RingOp::recv_reduce_copy, pos};
}

// All-gather: n steps, s in [0, n-1]; chunk c is the piece of the rank at position c.
CCB_HD int ring_allgather_steps(int n) { return n; }
CCB_HD RingStep ring_allgather_step(int n, int pos, int s) {
  if (s == 0) return {RingOp::copy_send, pos};
  if (s < n - 1) return {RingOp::recv_copy_send, mod_ranks(pos - s, n)};
  return {RingOp::recv, mod_ranks(pos - s, n)};
}

// One piece of the buffer: elements [offset, offset + count).
struct Piece {
  std::size_t offset;
  std::size_t count;
};

CCB_HD std::size_t div_up(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
CCB_HD std::size_t round_up(std::size_t a, std::size_t b) { return div_up(a, b) * b; }

// Part `b` of [0, total) split into `parts` contiguous pieces, each a multiple of `align`
// elements (the last one shorter); parts past the end are empty. The GPU kernels give each
// block (channel) one part.
CCB_HD Piece block_range(std::size_t total, int parts, int b, std::size_t align) {
  const std::size_t per = round_up(div_up(total, static_cast<std::size_t>(parts)), align);
  const std::size_t begin = per * static_cast<std::size_t>(b);
  if (begin >= total) return {total, 0};
  return {begin, per < total - begin ? per : total - begin};
}

// Loops needed for `count` elements over `n` ranks with at most `slice` elements per chunk.
CCB_HD std::size_t ring_loops(std::size_t count, int n, std::size_t slice) {
  return div_up(count, static_cast<std::size_t>(n) * slice);
}

// Elements of chunk `chunk` in loop `loop`. Chunks are `align`-element multiples (except at the
// end) no larger than `slice`; together the chunks of all loops cover [0, count) exactly once.
// slice must be a multiple of align.
CCB_HD Piece ring_piece(std::size_t count, int n, std::size_t slice, std::size_t align, std::size_t loop, int chunk) {
  const std::size_t loop_offset = loop * static_cast<std::size_t>(n) * slice;
  const std::size_t remaining = count - loop_offset;
  std::size_t real = round_up(div_up(remaining, static_cast<std::size_t>(n)), align);
  if (real > slice) real = slice;
  const std::size_t start = static_cast<std::size_t>(chunk) * real;
  if (start >= remaining) return {loop_offset + remaining, 0};
  const std::size_t left = remaining - start;
  return {loop_offset + start, left < real ? left : real};
}

}  // namespace ccbench::schedule
