#pragma once
// Rooted collectives as a chain along the ring (NCCL's ring reduce): pure and usable in CUDA
// kernels. Every rank talks only to its ring neighbours, so a chain runs over every connection a
// ring runs over, and pipelined in slots it moves the data at link speed.
#include "collectives/schedules/ring.h"

namespace ccbench::schedule {

// Reduce toward the root: the chain starts at the position after the root's and ends at the
// root. The first rank sends its input, every following rank adds its own and passes the sum on,
// the root adds its own and stores (and finalizes) the result. One op per rank, the same for
// every piece; `pos` and `root_pos` are positions on the ring, n >= 2.
CCB_HD RingOp chain_reduce_op(int n, int pos, int root_pos) {
  const int q = mod_ranks(pos - root_pos - 1, n);  // place on the chain, 0 = first
  if (q == 0) return RingOp::send;
  return q == n - 1 ? RingOp::recv_reduce_copy : RingOp::recv_reduce_send;
}

}  // namespace ccbench::schedule
