#pragma once
// Plain data shared by the host side (the implementations in this folder, through peer_state.h
// and cuda_resources.h) and the CUDA kernels (*.cu): kernel parameters, connection descriptors
// and the device-error record. No CUDA types here.
#include <cstddef>
#include <cstdint>

#include "collectives/types.h"
#include "transports/gpu/gpu_conn.h"  // SendConn, RecvConn, kFifoSlots

namespace ccbench::gpu {

constexpr int kMaxRanks = 64;      // ranks our kernels address directly (one node)
constexpr int kMaxChannels = 128;  // blocks of the ring and two-shot kernels
constexpr int kThreads = 512;      // threads per block of the data kernels
constexpr int kMaxRounds = 8;      // Bruck rounds (2^8 ranks > kMaxRanks)
constexpr int kFlagStride = 16;    // uint64 words between flags written by different GPUs (128 B)

// What a timed-out wait was waiting for.
enum WaitWhat : int { kWaitData = 1, kWaitSlot = 2, kWaitBarrier = 3, kWaitRound = 4 };
constexpr int kDeviceTimeout = 1;

// First device-side failure, in host-mapped memory the host reads after each synchronisation.
struct DeviceError {
  int code;  // 0: none; kDeviceTimeout
  int block;
  int what;  // WaitWhat
  int peer;
  std::uint64_t target;
  std::uint64_t seen;
};

struct WaitLimits {
  DeviceError* error;        // device pointer of the host-mapped record
  std::uint64_t timeout_ns;  // bound of every wait
};

// reduce: a chain along the ring toward the root (collectives/schedules/chain.h).
enum class RingKind : int { allreduce, allgather, reducescatter, reduce };

struct RingParams {
  RingKind kind;
  DataType dtype;
  ReduceOp op;
  int nranks;
  int avg_divisor;        // avg: what the reduced sum is divided by (nranks, or the ranks of a larger run)
  int pos;                // position on the ring
  int root_pos;           // reduce: the root's position on the ring
  const int* ring_ranks;  // [nranks], device memory: the rank at every ring position
  int channels;           // blocks; channel c uses send[c] and recv[c]
  const void* send;
  void* recv;
  std::size_t count;           // CollectiveShape::count
  std::size_t slot_bytes;      // bytes per FIFO slot
  const SendConn* send_conns;  // [channels], device memory
  const RecvConn* recv_conns;  // [channels]
  WaitLimits limits;
};

// Tree all-reduce: blocks are (tree, role, channel); conns indexed [tree][channel].
struct TreeParams {
  DataType dtype;
  ReduceOp op;
  int nranks;
  int channels;  // per tree and role
  const void* send;
  void* recv;
  std::size_t count;
  std::size_t slot_bytes;
  int parent[2];              // per tree, -1 at the root
  int nchildren[2];           // per tree
  const SendConn* up_send;    // [2][channels]: to the parent
  const RecvConn* up_recv;    // [2][channels][2]: from each child
  const SendConn* down_send;  // [2][channels][2]: to each child
  const RecvConn* down_recv;  // [2][channels]: from the parent
  WaitLimits limits;
};

// Every rank's memory as this rank addresses it, kept in device memory (rebuilt on attach) so
// that the kernels' parameter block stays small: a launch copies fewer bytes.
struct PeerTable {
  void* send_of[kMaxRanks];     // every rank's send buffer (the attached one)
  void* recv_of[kMaxRanks];     // every rank's receive buffer
  char* scratch_of[kMaxRanks];  // every rank's scratch region (flags, LL buffers)
};

// Kernels addressing every rank's memory directly (one-shot, two-shot, Bruck all-gather, barriers).
struct PeerParams {
  DataType dtype;
  ReduceOp op;
  int nranks;
  int rank;
  int root;    // reduce: the rank that receives the result
  int blocks;  // blocks that take part in the call
  int grid;    // blocks launched (one-shot: its most blocks at every size, so that every block counts every call)
  const void* send;
  void* recv;
  std::size_t count;
  const PeerTable* table;
  // Where this call's buffers lie in every rank's attached buffers (same on every rank):
  // byte offsets, and whether the send buffer lies in the receive buffer (in place).
  std::size_t send_offset;
  std::size_t recv_offset;
  int send_in_recv;
  std::uint64_t* epochs;          // [blocks] our state: calls made by each block
  std::size_t ll_bytes_per_rank;  // one-shot: LL bytes for one source in one parity
  WaitLimits limits;
};

// Scratch layout of the peer kernels (bytes from the region start).
constexpr std::size_t kBarrierFlagsOffset = 0;  // [kMaxChannels][kMaxRanks] flags, kFlagStride apart
constexpr std::size_t kRoundFlagsOffset =
    kBarrierFlagsOffset + std::size_t(kMaxChannels) * kMaxRanks * kFlagStride * 8;  // [kMaxChannels][kMaxRounds]
constexpr std::size_t kLowLatencyOffset = kRoundFlagsOffset + std::size_t(kMaxChannels) * kMaxRounds * kFlagStride * 8;

// Launchers (cuda files); each returns the cudaError_t of the launch as an int.
int launch_ring(const RingParams& p, void* stream);
int launch_tree(const TreeParams& p, void* stream);
int launch_oneshot(const PeerParams& p, void* stream);
int launch_twoshot(const PeerParams& p, void* stream);
// Reduce by direct reads: the root reduces every rank's input into its output; every rank takes
// part in the two barriers around it. Needs the send (and, in place, receive) buffers attached.
int launch_direct_reduce(const PeerParams& p, void* stream);
int launch_bruck_allgather(const PeerParams& p, void* stream);
// A barrier over all ranks on block 0's flags (for the copy-engine collectives); blocks must be 1.
int launch_barrier(const PeerParams& p, void* stream);

}  // namespace ccbench::gpu
