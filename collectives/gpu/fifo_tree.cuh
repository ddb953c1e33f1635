#pragma once
// Tree all-reduce over FIFO connections (fifo_device.cuh): reduce up and broadcast down the
// trees, each (tree, channel) a pair of blocks. Each variant is instantiated in a file of its own,
// so that they compile in parallel: for aligned buffers in fifo_tree.cu, for misaligned ones
// (reduce_copy's kShift) in fifo_tree_shift.cu.
#include <cuda_runtime.h>

#include "collectives/gpu/fifo_device.cuh"
#include "collectives/schedules/tree.h"

namespace ccbench::gpu::fifo {

using schedule::Piece;

// ---- tree all-reduce ---------------------------------------------------------------------------

template <typename T, bool kShift, int NS>
__device__ __forceinline__ void tree_store(const TreeParams& p, bool final, const void* const (&s)[NS], void* d0,
                                           void* d1, void* d2, int nd, std::size_t n) {
  if (nd == 1) {
    void* const d[1] = {d0};
    reduce_copy<T, NS, 1, kShift>(p.op, final, p.nranks, s, d, n);
  } else if (nd == 2) {
    void* const d[2] = {d0, d1};
    reduce_copy<T, NS, 2, kShift>(p.op, final, p.nranks, s, d, n);
  } else {
    void* const d[3] = {d0, d1, d2};
    reduce_copy<T, NS, 3, kShift>(p.op, final, p.nranks, s, d, n);
  }
}

// Reduces `in` with the slots of `nc` children into up to three destinations.
template <typename T, bool kShift>
__device__ __forceinline__ void tree_reduce(const TreeParams& p, bool final, const T* in, const void* c0,
                                            const void* c1, int nc, void* d0, void* d1, void* d2, int nd,
                                            std::size_t n) {
  if (nc == 0) {
    const void* const s[1] = {in};
    tree_store<T, kShift, 1>(p, final, s, d0, d1, d2, nd, n);
  } else if (nc == 1) {
    const void* const s[2] = {c0, in};
    tree_store<T, kShift, 2>(p, final, s, d0, d1, d2, nd, n);
  } else {
    const void* const s[3] = {c0, c1, in};
    tree_store<T, kShift, 3>(p, final, s, d0, d1, d2, nd, n);
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
template <typename T, bool kShift>
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
      tree_reduce<T, kShift>(p, true, in + off, c0, c1, nc, out + off, d1, d2, 1 + nc, m);
    else
      tree_reduce<T, kShift>(p, false, in + off, c0, c1, nc, slot_of(b.ups->slots, b.up_sent, p.slot_bytes), nullptr,
                             nullptr, 1, m);
    return;
  }
  const void* from = slot_of(b.dnr->slots, b.down_recv, p.slot_bytes);
  switch (nc) {
    case 0: reduce_copy<T, 1, 1, kShift>(p.op, false, p.nranks, {from}, {out + off}, m); break;
    case 1: reduce_copy<T, 1, 2, kShift>(p.op, false, p.nranks, {from}, {out + off, d1}, m); break;
    default: reduce_copy<T, 1, 3, kShift>(p.op, false, p.nranks, {from}, {out + off, d1, d2}, m); break;
  }
}

template <typename T, bool kShift>
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
    tree_move<T, kShift>(p, b, off, m);
    __syncthreads();
    b.publish(m * sizeof(T));
  }
  if (threadIdx.x == 0) b.save();
}

// Launches tree_kernel<T, kShift> for p.dtype; CUDA's launch error.
template <bool kShift>
int launch_tree_variant(const TreeParams& p, cudaStream_t s) {
  dispatch_type(p.dtype, [&](auto v) { tree_kernel<decltype(v), kShift><<<4 * p.channels, kThreads, 0, s>>>(p); });
  return cudaGetLastError();
}

// The two variants' launchers, each defined in its own file.
int launch_tree_aligned(const TreeParams& p, cudaStream_t s);  // fifo_tree.cu
int launch_tree_shifted(const TreeParams& p, cudaStream_t s);  // fifo_tree_shift.cu

}  // namespace ccbench::gpu::fifo
