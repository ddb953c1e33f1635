// Ring (all-reduce, all-gather, reduce-scatter, and reduce as a chain toward the root) and tree
// kernels over FIFO connections (NCCL's "simple" protocol): one block per channel
// moves one slot per step. A sender waits for a free slot (head), writes the slot in the
// receiver's memory and publishes it (tail, release at system scope); the receiver waits for
// the tail, reads and frees the slot (head). Counters only grow and persist across launches in
// each rank's state memory, so the kernels also run under CUDA-graph replay.
#include <cuda_runtime.h>

#include "collectives/gpu/device.cuh"
#include "collectives/schedules/chain.h"
#include "collectives/schedules/ring.h"
#include "collectives/schedules/tree.h"

namespace ccbench::gpu {

namespace {

using schedule::Piece;
using schedule::RingOp;

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

// One ring step on `n` elements: `in` and `out` are this rank's input and output for the piece.
template <typename T>
__device__ __forceinline__ bool ring_step(RingOp op, const RingParams& p, const SendConn& sc, const RecvConn& rc,
                                          BlockFifo& f, const T* in, T* out, std::size_t n) {
  const bool sends = schedule::ring_op_sends(op);
  const bool recvs = schedule::ring_op_receives(op);
  if (!acquire(sends ? &sc : nullptr, f.sent, recvs ? &rc : nullptr, f.received, p.limits)) return false;
  void* sslot = sends ? slot_of(sc.slots, f.sent, p.slot_bytes) : nullptr;
  const void* rslot = recvs ? slot_of(rc.slots, f.received, p.slot_bytes) : nullptr;
  const ReduceOp rop = p.op;
  switch (op) {
    case RingOp::send: reduce_copy<T, 1, 1>(rop, false, p.avg_divisor, {in}, {sslot}, n); break;
    case RingOp::recv_reduce_send: reduce_copy<T, 2, 1>(rop, false, p.avg_divisor, {rslot, in}, {sslot}, n); break;
    case RingOp::recv_reduce_copy_send:
      reduce_copy<T, 2, 2>(rop, true, p.avg_divisor, {rslot, in}, {out, sslot}, n);
      break;
    case RingOp::recv_reduce_copy: reduce_copy<T, 2, 1>(rop, true, p.avg_divisor, {rslot, in}, {out}, n); break;
    case RingOp::copy_send:
      if (in == out) reduce_copy<T, 1, 1>(rop, false, p.avg_divisor, {in}, {sslot}, n);
      else reduce_copy<T, 1, 2>(rop, false, p.avg_divisor, {in}, {out, sslot}, n);
      break;
    case RingOp::recv_copy_send: reduce_copy<T, 1, 2>(rop, false, p.avg_divisor, {rslot}, {out, sslot}, n); break;
    case RingOp::recv: reduce_copy<T, 1, 1>(rop, false, p.avg_divisor, {rslot}, {out}, n); break;
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

template <typename T>
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
        ok = ring_step<T>(st.op, p, sc, rc, f, in + off, out + off, pc.count);
      }
    }
  } else {
    // All-gather / reduce-scatter: chunk k is the block of `count` elements of the rank at ring
    // position k; the channel moves its part of every block, one slot at a time. Reduce: one step
    // per slice, the op of this rank's place on the chain toward the root, on the one block.
    const Piece range = schedule::block_range(p.count, p.channels, c, align);
    const std::size_t loops = schedule::div_up(range.count, slice);
    const bool gather = p.kind == RingKind::allgather;
    const int steps = gather                        ? schedule::ring_allgather_steps(n)
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
        ok = ring_step<T>(st.op, p, sc, rc, f, src, dst, m);
      }
    }
  }
  if (threadIdx.x == 0) {
    *sc.step = f.sent;
    *rc.step = f.received;
  }
}

// ---- tree all-reduce ---------------------------------------------------------------------------

template <typename T, int NS>
__device__ __forceinline__ void tree_store(const TreeParams& p, bool final, const void* const (&s)[NS], void* d0,
                                           void* d1, void* d2, int nd, std::size_t n) {
  if (nd == 1) {
    void* const d[1] = {d0};
    reduce_copy<T, NS, 1>(p.op, final, p.nranks, s, d, n);
  } else if (nd == 2) {
    void* const d[2] = {d0, d1};
    reduce_copy<T, NS, 2>(p.op, final, p.nranks, s, d, n);
  } else {
    void* const d[3] = {d0, d1, d2};
    reduce_copy<T, NS, 3>(p.op, final, p.nranks, s, d, n);
  }
}

// Reduces `in` with the slots of `nc` children into up to three destinations.
template <typename T>
__device__ __forceinline__ void tree_reduce(const TreeParams& p, bool final, const T* in, const void* c0,
                                            const void* c1, int nc, void* d0, void* d1, void* d2, int nd,
                                            std::size_t n) {
  if (nc == 0) {
    const void* const s[1] = {in};
    tree_store<T, 1>(p, final, s, d0, d1, d2, nd, n);
  } else if (nc == 1) {
    const void* const s[2] = {c0, in};
    tree_store<T, 2>(p, final, s, d0, d1, d2, nd, n);
  } else {
    const void* const s[3] = {c0, c1, in};
    tree_store<T, 3>(p, final, s, d0, d1, d2, nd, n);
  }
}

// One block of the tree all-reduce: tree t, channel c, role 0 (reduce up; at the root also
// broadcast down) or 1 (broadcast down). Every thread keeps a copy of the step counters; thread 0
// waits on and publishes them.
struct TreeBlock {
  int role, nc;
  bool root;
  const SendConn* ups;     // to the parent (null at the root)
  const RecvConn* upr[2];  // from each child
  const SendConn* dns[2];  // to each child
  const RecvConn* dnr;     // from the parent (null at the root)
  std::uint64_t up_sent, up_recv[2], down_sent[2], down_recv;

  __device__ bool receives_up() const { return role == 0; }
  __device__ bool sends_up() const { return role == 0 && ups; }
  __device__ bool receives_down() const { return role == 1; }
  __device__ bool sends_down() const { return role == 1 || root; }

  __device__ TreeBlock(const TreeParams& p, int t, int c, int role_) : role(role_), nc(p.nchildren[t]) {
    root = p.parent[t] < 0;
    const int tc = t * p.channels + c;
    ups = root ? nullptr : &p.up_send[tc];
    upr[0] = &p.up_recv[tc * 2];
    upr[1] = &p.up_recv[tc * 2 + 1];
    dns[0] = &p.down_send[tc * 2];
    dns[1] = &p.down_send[tc * 2 + 1];
    dnr = root ? nullptr : &p.down_recv[tc];
    up_sent = down_recv = 0;
    up_recv[0] = up_recv[1] = down_sent[0] = down_sent[1] = 0;
    // The counters this block owns, as the previous launch left them.
    if (sends_up()) up_sent = *ups->step;
    for (int k = 0; k < nc; ++k) {
      if (receives_up()) up_recv[k] = *upr[k]->step;
      if (sends_down()) down_sent[k] = *dns[k]->step;
    }
    if (receives_down()) down_recv = *dnr->step;
  }

  // Thread 0: data first (children or parent), then free slots downstream; false on timeout.
  __device__ bool wait_ready(const WaitLimits& w) const {
    bool ok = true;
    if (receives_up()) {
      for (int k = 0; ok && k < nc; ++k) ok = wait_at_least(upr[k]->tail, up_recv[k] + 1, w, kWaitData, upr[k]->peer);
      if (ok && sends_up() && up_sent + 1 > kFifoSlots)
        ok = wait_at_least(ups->head, up_sent + 1 - kFifoSlots, w, kWaitSlot, ups->peer);
    } else {
      ok = wait_at_least(dnr->tail, down_recv + 1, w, kWaitData, dnr->peer);
    }
    for (int k = 0; ok && sends_down() && k < nc; ++k)
      if (down_sent[k] + 1 > kFifoSlots)
        ok = wait_at_least(dns[k]->head, down_sent[k] + 1 - kFifoSlots, w, kWaitSlot, dns[k]->peer);
    return ok;
  }

  // Every thread advances its counters; thread 0 frees the received slots and publishes the sent
  // ones, of `bytes` each.
  __device__ void publish(std::size_t bytes) {
    const bool lead = threadIdx.x == 0;
    if (receives_up()) {
      for (int k = 0; k < nc; ++k) {
        ++up_recv[k];
        if (lead) st_release_sys(upr[k]->head, up_recv[k]);
      }
    }
    if (sends_up()) {
      if (lead) put_size(ups, up_sent, bytes);
      ++up_sent;
      if (lead) st_release_sys(ups->tail, up_sent);
    }
    if (receives_down()) {
      ++down_recv;
      if (lead) st_release_sys(dnr->head, down_recv);
    }
    if (sends_down()) {
      for (int k = 0; k < nc; ++k) {
        if (lead) put_size(dns[k], down_sent[k], bytes);
        ++down_sent[k];
        if (lead) st_release_sys(dns[k]->tail, down_sent[k]);
      }
    }
  }

  // Thread 0: the counters for the next launch.
  __device__ void save() const {
    if (sends_up()) *ups->step = up_sent;
    for (int k = 0; k < nc; ++k) {
      if (receives_up()) *upr[k]->step = up_recv[k];
      if (sends_down()) *dns[k]->step = down_sent[k];
    }
    if (receives_down()) *dnr->step = down_recv;
  }
};

// Moves one slice of `m` elements at element offset `off` through the block's connections.
template <typename T>
__device__ __forceinline__ void tree_move(const TreeParams& p, const TreeBlock& b, std::size_t off, std::size_t m) {
  const T* in = static_cast<const T*>(p.send);
  T* out = static_cast<T*>(p.recv);
  const int nc = b.nc;
  void* d1 = b.sends_down() && nc > 0 ? slot_of(b.dns[0]->slots, b.down_sent[0], p.slot_bytes) : nullptr;
  void* d2 = b.sends_down() && nc > 1 ? slot_of(b.dns[1]->slots, b.down_sent[1], p.slot_bytes) : nullptr;
  if (b.receives_up()) {
    const void* c0 = nc > 0 ? slot_of(b.upr[0]->slots, b.up_recv[0], p.slot_bytes) : nullptr;
    const void* c1 = nc > 1 ? slot_of(b.upr[1]->slots, b.up_recv[1], p.slot_bytes) : nullptr;
    if (b.root)  // reduce, finish, store and start the broadcast down
      tree_reduce<T>(p, true, in + off, c0, c1, nc, out + off, d1, d2, 1 + nc, m);
    else
      tree_reduce<T>(p, false, in + off, c0, c1, nc, slot_of(b.ups->slots, b.up_sent, p.slot_bytes), nullptr,
                     nullptr, 1, m);
    return;
  }
  const void* from = slot_of(b.dnr->slots, b.down_recv, p.slot_bytes);
  switch (nc) {
    case 0: reduce_copy<T, 1, 1>(p.op, false, p.nranks, {from}, {out + off}, m); break;
    case 1: reduce_copy<T, 1, 2>(p.op, false, p.nranks, {from}, {out + off, d1}, m); break;
    default: reduce_copy<T, 1, 3>(p.op, false, p.nranks, {from}, {out + off, d1, d2}, m); break;
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) tree_kernel(TreeParams p) {
  const int C = p.channels;
  const int c = static_cast<int>(blockIdx.x) % C;
  const int role = (static_cast<int>(blockIdx.x) / C) % 2;  // 0: reduce up, 1: broadcast down
  const int t = static_cast<int>(blockIdx.x) / (2 * C);
  if (role == 1 && p.parent[t] < 0) return;  // the root's up block already sends down

  const std::size_t align = kPackBytes / sizeof(T);
  const std::size_t slice = p.slot_bytes / sizeof(T);
  const Piece share = schedule::tree_share(p.count, align, t);
  const Piece range = schedule::block_range(share.count, C, c, align);
  const std::size_t loops = schedule::div_up(range.count, slice);
  TreeBlock b(p, t, c, role);
  __shared__ int ok;
  for (std::size_t loop = 0; loop < loops; ++loop) {
    const std::size_t off = share.offset + range.offset + loop * slice;
    const std::size_t m = range.count - loop * slice < slice ? range.count - loop * slice : slice;
    if (threadIdx.x == 0) ok = b.wait_ready(p.limits);
    __syncthreads();
    if (!ok) break;
    tree_move<T>(p, b, off, m);
    __syncthreads();
    b.publish(m * sizeof(T));
  }
  if (threadIdx.x == 0) b.save();
}

}  // namespace

int launch_ring(const RingParams& p, void* stream) {
  dispatch_type(p.dtype, [&](auto v) {
    using T = decltype(v);
    ring_kernel<T><<<p.channels, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
  });
  return cudaGetLastError();
}

int launch_tree(const TreeParams& p, void* stream) {
  dispatch_type(p.dtype, [&](auto v) {
    using T = decltype(v);
    tree_kernel<T><<<4 * p.channels, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
  });
  return cudaGetLastError();
}

}  // namespace ccbench::gpu
