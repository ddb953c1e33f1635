// Kernels that address every rank's memory directly through CUDA IPC mappings: one-shot and
// two-shot all-reduce, reduce by direct reads, the log-depth (Bruck) all-gather and a barrier.
// Block b of every rank handles the same part of the data, so all synchronisation is between
// equal block indices.
// Each block counts its calls in state memory (epochs); flags carry the epoch, so nothing is
// ever reset and graph replays work.
#include <cuda_runtime.h>

#include "collectives/gpu/device.cuh"
#include "collectives/schedules/ring.h"
#include "collectives/schedules/tree.h"

namespace ccbench::gpu {

namespace {

using schedule::Piece;

__device__ __forceinline__ volatile std::uint64_t* barrier_flag(char* scratch, int block, int from) {
  return reinterpret_cast<volatile std::uint64_t*>(scratch + kBarrierFlagsOffset) +
         (static_cast<std::size_t>(block) * kMaxRanks + from) * kFlagStride;
}
__device__ __forceinline__ volatile std::uint64_t* round_flag(char* scratch, int block, int round) {
  return reinterpret_cast<volatile std::uint64_t*>(scratch + kRoundFlagsOffset) +
         (static_cast<std::size_t>(block) * kMaxRounds + round) * kFlagStride;
}

__device__ __forceinline__ char* scratch_of(const PeerParams& p, int r) { return p.table->scratch_of[r]; }
__device__ __forceinline__ const char* send_of(const PeerParams& p, int r) {
  return static_cast<const char*>(p.send_in_recv ? p.table->recv_of[r] : p.table->send_of[r]) + p.send_offset;
}
__device__ __forceinline__ char* recv_of(const PeerParams& p, int r) {
  return static_cast<char*>(p.table->recv_of[r]) + p.recv_offset;
}

// All ranks' block b meet: each posts `value` to every peer and waits for every peer's post.
// Writes of this block made before the call are visible to the peers after it (release).
__device__ __forceinline__ bool block_barrier(const PeerParams& p, std::uint64_t value) {
  __shared__ int ok;
  const int b = static_cast<int>(blockIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) ok = 1;
  __syncthreads();
  const int t = static_cast<int>(threadIdx.x);
  if (t < p.nranks && t != p.rank) st_release_sys(barrier_flag(scratch_of(p, t), b, p.rank), value);
  if (t < p.nranks && t != p.rank) {
    if (!wait_at_least(barrier_flag(scratch_of(p, p.rank), b, t), value, p.limits, kWaitBarrier, t)) ok = 0;
  }
  __syncthreads();
  return ok;
}

// ---- one-shot all-reduce with the low-latency (LL) protocol -------------------------------------
// Every rank pushes its input to every peer as 16-byte lines {data, flag, data, flag}; the flag
// is the call's number, so a reader knows a line is fresh without any other synchronisation.
// Buffers alternate between two parities: a rank can be at most one call ahead of a peer.
// Which words a block covers depends on the blocks a size uses, so a line can be read by another
// block than the one that read it last: every block of the grid (the most blocks any size uses)
// counts every call, so all blocks share one call number, and the reader clears each line it has
// read (flag 0, which no call uses), so a line left from an earlier call never looks fresh,
// whatever the sequence of sizes and however many calls pass (no 32-bit wrap can alias).

struct LLLine {
  unsigned d0, f0, d1, f1;
};

__device__ __forceinline__ void store_ll(void* p, unsigned long long data, unsigned flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(static_cast<unsigned>(data)), "r"(flag),
               "r"(static_cast<unsigned>(data >> 32)), "r"(flag)
               : "memory");
}

// The flag of call `epoch` (1, 2, ...): never 0, the cleared line's.
__device__ __forceinline__ unsigned ll_flag(std::uint64_t epoch) {
  return static_cast<unsigned>(epoch % 0xffffffffull) + 1;
}

__device__ __forceinline__ void clear_ll(void* p) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1,%1,%1,%1};" ::"l"(p), "r"(0u) : "memory");
}

__device__ __forceinline__ bool load_ll(const void* p, unsigned flag, unsigned long long* data, const WaitLimits& w,
                                        int peer) {
  LLLine l;
  std::uint64_t start = 0;
  for (unsigned spins = 0;; ++spins) {
    asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(l.d0), "=r"(l.f0), "=r"(l.d1), "=r"(l.f1)
                 : "l"(p));
    if (l.f0 == flag && l.f1 == flag) break;
    if ((spins & 1023u) == 1023u) {
      if (*reinterpret_cast<volatile int*>(&w.error->code) != 0) return false;
      std::uint64_t now = global_timer_ns();
      if (start == 0) start = now;
      else if (now - start > w.timeout_ns) {
        report_timeout(w, kWaitData, peer, flag, l.f0);
        return false;
      }
    }
  }
  *data = static_cast<unsigned long long>(l.d0) | (static_cast<unsigned long long>(l.d1) << 32);
  return true;
}

// 8 bytes of input at byte `off` (fewer at the end), zero padded.
__device__ __forceinline__ unsigned long long load_word(const char* base, std::size_t off, std::size_t bytes) {
  if (off + 8 <= bytes && (reinterpret_cast<std::uintptr_t>(base + off) & 7) == 0)
    return *reinterpret_cast<const unsigned long long*>(base + off);
  unsigned long long v = 0;
  for (std::size_t i = 0; i < 8 && off + i < bytes; ++i)
    v |= static_cast<unsigned long long>(static_cast<unsigned char>(base[off + i])) << (8 * i);
  return v;
}
__device__ __forceinline__ void store_word(char* base, std::size_t off, std::size_t bytes, unsigned long long v) {
  if (off + 8 <= bytes && (reinterpret_cast<std::uintptr_t>(base + off) & 7) == 0) {
    *reinterpret_cast<unsigned long long*>(base + off) = v;
    return;
  }
  for (std::size_t i = 0; i < 8 && off + i < bytes; ++i) base[off + i] = static_cast<char>(v >> (8 * i));
}

template <typename T>
__global__ void __launch_bounds__(kThreads) oneshot_kernel(PeerParams p) {
  const int b = static_cast<int>(blockIdx.x);
  const std::uint64_t epoch = p.epochs[b] + 1;
  if (b >= p.blocks) {  // no words at this size: the block only counts the call
    if (threadIdx.x == 0) p.epochs[b] = epoch;
    return;
  }
  const unsigned flag = ll_flag(epoch);
  const std::size_t parity = epoch & 1;
  const std::size_t bytes = p.count * sizeof(T);
  const std::size_t words = schedule::div_up(bytes, 8);
  const Piece mine = schedule::block_range(words, p.blocks, b, 1);
  const char* in = static_cast<const char*>(p.send);
  char* out = static_cast<char*>(p.recv);
  const std::size_t stride = p.ll_bytes_per_rank;  // one source, one parity
  auto line = [&](int owner, int source, std::size_t w) {
    return scratch_of(p, owner) + kLowLatencyOffset + (parity * p.nranks + source) * stride + w * sizeof(LLLine);
  };
  // Push: my words to every peer.
  for (std::size_t w = mine.offset + threadIdx.x; w < mine.offset + mine.count; w += blockDim.x) {
    unsigned long long v = load_word(in, w * 8, bytes);
    for (int r = 0; r < p.nranks; ++r)
      if (r != p.rank) store_ll(line(r, p.rank, w), v, flag);
  }
  // Pull: reduce every rank's word in rank order (Accumulator: narrow floats in float).
  bool ok = true;
  for (std::size_t w = mine.offset + threadIdx.x; ok && w < mine.offset + mine.count; w += blockDim.x) {
    Accumulator<T, 8> acc;
    for (int r = 0; r < p.nranks; ++r) {
      unsigned long long v;
      if (r == p.rank) {
        v = load_word(in, w * 8, bytes);
      } else if (load_ll(line(p.rank, r, w), flag, &v, p.limits, r)) {
        clear_ll(line(p.rank, r, w));
      } else {
        ok = false;
        break;
      }
      if (r == 0) acc.set(&v);
      else acc.add(p.op, &v);
    }
    if (!ok) break;
    unsigned long long result = 0;
    acc.get(&result, p.op, true, p.nranks);
    store_word(out, w * 8, bytes, result);
  }
  __syncthreads();
  if (threadIdx.x == 0) p.epochs[b] = epoch;
}

// ---- reductions by direct reads ------------------------------------------------------------------

// Elements [off, off + n) of every rank's input, reduced in rank order and finalized, stored at
// the same place in the outputs of ranks [out_first, out_end). All threads of the block take part.
// Narrow floats accumulate in float over the ranks and are rounded once (Accumulator).
template <typename T>
__device__ __forceinline__ void reduce_inputs(const PeerParams& p, std::size_t off, std::size_t n, int out_first,
                                              int out_end) {
  const std::size_t align = kPackBytes / sizeof(T);
  const int tid = static_cast<int>(threadIdx.x), nt = static_cast<int>(blockDim.x);
  std::uintptr_t bits = 0;
  for (int r = 0; r < p.nranks; ++r)
    bits |= reinterpret_cast<std::uintptr_t>(reinterpret_cast<const T*>(send_of(p, r)) + off);
  for (int r = out_first; r < out_end; ++r)
    bits |= reinterpret_cast<std::uintptr_t>(reinterpret_cast<T*>(recv_of(p, r)) + off);
  std::size_t done = 0;
  if ((bits & (kPackBytes - 1)) == 0) {
    constexpr int kUnroll = 4;
    const std::size_t packs = n / align;
    std::size_t q = static_cast<std::size_t>(tid);
    for (; q + (kUnroll - 1) * nt < packs; q += static_cast<std::size_t>(nt) * kUnroll) {
      Accumulator<T, kPackBytes> acc[kUnroll];
      Pack v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        v[u] = load_pack(reinterpret_cast<const Pack*>(send_of(p, 0)) + off / align + q + u * nt);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc[u].set(&v[u]);
      for (int r = 1; r < p.nranks; ++r) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          v[u] = load_pack(reinterpret_cast<const Pack*>(send_of(p, r)) + off / align + q + u * nt);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc[u].add(p.op, &v[u]);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc[u].get(&v[u], p.op, true, p.nranks);
      for (int r = out_first; r < out_end; ++r)
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          store_pack(reinterpret_cast<Pack*>(recv_of(p, r)) + off / align + q + u * nt, v[u]);
    }
    for (; q < packs; q += nt) {
      Pack v = load_pack(reinterpret_cast<const Pack*>(send_of(p, 0)) + off / align + q);
      Accumulator<T, kPackBytes> acc;
      acc.set(&v);
      for (int r = 1; r < p.nranks; ++r) {
        v = load_pack(reinterpret_cast<const Pack*>(send_of(p, r)) + off / align + q);
        acc.add(p.op, &v);
      }
      acc.get(&v, p.op, true, p.nranks);
      for (int r = out_first; r < out_end; ++r) store_pack(reinterpret_cast<Pack*>(recv_of(p, r)) + off / align + q, v);
    }
    done = packs * align;
  }
  for (std::size_t i = done + static_cast<std::size_t>(tid); i < n; i += static_cast<std::size_t>(nt)) {
    Acc<T> acc = widen<T>(load_elem<T>(reinterpret_cast<const T*>(send_of(p, 0)) + off + i));
    for (int r = 1; r < p.nranks; ++r)
      acc = combine<T>(p.op, acc, widen<T>(load_elem<T>(reinterpret_cast<const T*>(send_of(p, r)) + off + i)));
    const T out = narrow<T>(p.op, acc, true, p.nranks);
    for (int r = out_first; r < out_end; ++r) reinterpret_cast<T*>(recv_of(p, r))[off + i] = out;
  }
}

// Two-shot all-reduce: reduce-scatter by direct reads, all-gather by direct writes.
template <typename T>
__global__ void __launch_bounds__(kThreads) twoshot_kernel(PeerParams p) {
  const int b = static_cast<int>(blockIdx.x);
  const std::uint64_t epoch = p.epochs[b] + 2;
  const std::size_t align = kPackBytes / sizeof(T);
  // Rank r owns chunk r; block b handles its part of this rank's chunk.
  const Piece chunk = schedule::block_range(p.count, p.nranks, p.rank, align);
  const Piece part = schedule::block_range(chunk.count, p.blocks, b, align);

  // Every rank's input is ready, and every rank finished with its output of the last call.
  if (!block_barrier(p, epoch - 1)) return;
  reduce_inputs<T>(p, chunk.offset + part.offset, part.count, 0, p.nranks);
  // Every rank's writes into every output are done before anyone returns.
  block_barrier(p, epoch);
  if (threadIdx.x == 0) p.epochs[b] = epoch;
}

// Reduce: the root reads every rank's input and reduces into its own output (block b its part);
// the other ranks only meet at the barriers, so that their inputs stay put while the root reads.
template <typename T>
__global__ void __launch_bounds__(kThreads) direct_reduce_kernel(PeerParams p) {
  const int b = static_cast<int>(blockIdx.x);
  const std::uint64_t epoch = p.epochs[b] + 2;
  const Piece part = schedule::block_range(p.count, p.blocks, b, kPackBytes / sizeof(T));
  // Every rank's input is ready.
  if (!block_barrier(p, epoch - 1)) return;
  if (p.rank == p.root) reduce_inputs<T>(p, part.offset, part.count, p.rank, p.rank + 1);
  // The root has read every input before any rank returns (and may change its input).
  block_barrier(p, epoch);
  if (threadIdx.x == 0) p.epochs[b] = epoch;
}

// ---- log-depth all-gather (Bruck) with direct writes -------------------------------------------

// Every rank's block b is in this call: a dissemination barrier over the Bruck rounds' peers
// (round k: post to rank - 2^k, wait for rank + 2^k; each post follows the waits before it, so after
// ceil(log2 n) rounds every rank has heard from all). It addresses only the ranks the rounds write
// to (schedule::bruck_peers), the peers the tree maps, never every rank of the node.
__device__ __forceinline__ bool bruck_barrier(const PeerParams& p, std::uint64_t epoch) {
  __shared__ int ok;
  const int b = static_cast<int>(blockIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) {
    ok = 1;
    for (int k = 0; ok && k < schedule::bruck_rounds(p.nranks); ++k) {
      const schedule::BruckRound br = schedule::bruck_round(p.nranks, p.rank, k);
      st_release_sys(barrier_flag(scratch_of(p, br.send_to), b, p.rank), epoch);
      if (!wait_at_least(barrier_flag(scratch_of(p, p.rank), b, br.recv_from), epoch, p.limits, kWaitBarrier,
                         br.recv_from))
        ok = 0;
    }
  }
  __syncthreads();
  return ok;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) bruck_kernel(PeerParams p) {
  const int b = static_cast<int>(blockIdx.x);
  const std::uint64_t epoch = p.epochs[b] + 1;
  const std::size_t align = kPackBytes / sizeof(T);
  const Piece part = schedule::block_range(p.count, p.blocks, b, align);  // this block's part of every piece
  T* out = reinterpret_cast<T*>(recv_of(p, p.rank));
  const T* in = static_cast<const T*>(p.send);
  if (!bruck_barrier(p, epoch)) return;  // every rank is in this call: its output may be written
  if (part.count) {
    T* mine = out + static_cast<std::size_t>(p.rank) * p.count + part.offset;
    if (in + part.offset != mine) reduce_copy<T, 1, 1>(p.op, false, p.nranks, {in + part.offset}, {mine}, part.count);
  }
  // Round 0 sends this piece on from `out`: where `in` and `out` differ in alignment, reduce_copy
  // hands the elements to other threads than the copy did (its shifted path), so the block must
  // have written all of it first. Without this a thread read an element before it was written:
  // stale data where the buffer was new (gpu1_teardown_1000), never seen with buffers reused.
  __syncthreads();
  for (int k = 0; k < schedule::bruck_rounds(p.nranks); ++k) {
    const schedule::BruckRound br = schedule::bruck_round(p.nranks, p.rank, k);
    T* dest = reinterpret_cast<T*>(recv_of(p, br.send_to));
    if (part.count) {
      for (int j = 0; j < br.blocks; ++j) {
        const std::size_t piece = static_cast<std::size_t>((br.send_first + j) % p.nranks) * p.count + part.offset;
        reduce_copy<T, 1, 1>(p.op, false, p.nranks, {out + piece}, {dest + piece}, part.count);
      }
    }
    __syncthreads();
    __shared__ int ok;
    if (threadIdx.x == 0) {
      st_release_sys(round_flag(scratch_of(p, br.send_to), b, k), epoch);
      ok = wait_at_least(round_flag(scratch_of(p, p.rank), b, k), epoch, p.limits, kWaitRound, br.recv_from);
    }
    __syncthreads();
    if (!ok) return;
  }
  if (threadIdx.x == 0) p.epochs[b] = epoch;
}

__global__ void barrier_kernel(PeerParams p) {
  const std::uint64_t epoch = p.epochs[0] + 1;
  if (block_barrier(p, epoch) && threadIdx.x == 0) p.epochs[0] = epoch;
}

cudaStream_t st(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace

int launch_oneshot(const PeerParams& p, void* stream) {
  dispatch_type(p.dtype, [&](auto v) {
    using T = decltype(v);
    oneshot_kernel<T><<<p.grid, kThreads, 0, st(stream)>>>(p);
  });
  return cudaGetLastError();
}

int launch_twoshot(const PeerParams& p, void* stream) {
  dispatch_type(p.dtype, [&](auto v) {
    using T = decltype(v);
    twoshot_kernel<T><<<p.blocks, kThreads, 0, st(stream)>>>(p);
  });
  return cudaGetLastError();
}

int launch_direct_reduce(const PeerParams& p, void* stream) {
  dispatch_type(p.dtype, [&](auto v) {
    using T = decltype(v);
    direct_reduce_kernel<T><<<p.blocks, kThreads, 0, st(stream)>>>(p);
  });
  return cudaGetLastError();
}

int launch_bruck_allgather(const PeerParams& p, void* stream) {
  dispatch_type(p.dtype, [&](auto v) {
    using T = decltype(v);
    bruck_kernel<T><<<p.blocks, kThreads, 0, st(stream)>>>(p);
  });
  return cudaGetLastError();
}

int launch_barrier(const PeerParams& p, void* stream) {
  barrier_kernel<<<1, 64 < p.nranks ? p.nranks : 64, 0, st(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace ccbench::gpu
