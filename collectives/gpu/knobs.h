#pragma once
// The GPU kernels' tuning knobs: every tuned number as a named default with the measurement
// that chose it, and the environment variable that overrides it. Each reader validates its
// variable and throws Error(usage) naming a bad value. The measurements are evidence entries
// (docs/evidence/INDEX.md), all on 2 x H200 (NV18), busbw of float sum out of place.
#include <cstddef>

namespace ccbench::gpu {

// 1 MiB FIFO slots: a 64-channel ring all-reduce reached 355 GB/s with them against 350 with
// 256 KiB slots (and 48 channels x 512 KiB 340), the tuning noted in h200x2-20261130-sweep-32f952a.
constexpr std::size_t kDefaultSlotBytes = std::size_t(1) << 20;
// 128 ring channels (capped by the resident limit): 366 GB/s at 4 GiB against 359 with 96 and 347
// with 64 (1 MiB slots; the tuning noted in h200x2-20261130-sweep-cc01c2c).
constexpr int kDefaultRingChannels = 128;
// Small ring messages use fewer channels, one per 128 KiB, so that slots are fuller.
constexpr std::size_t kRingBytesPerChannel = std::size_t(128) << 10;
// 32 tree channels per tree and role (128 blocks): 340 GB/s at 256 MiB against 303 with 16
// (h200x2-20261130-tree-channels).
constexpr int kDefaultTreeChannels = 32;
constexpr int kMaxTreeChannels = 32;
// 128 two-shot blocks: 340 GB/s at 256 MiB against 330 with 64 and 307 with 32 (the tuning noted
// in h200x2-20261130-sweep-cc01c2c); more reads of the peer's input in flight.
constexpr int kDefaultTwoshotBlocks = 128;
// A two-shot block handles at least 64 KiB of its rank's chunk.
constexpr std::size_t kTwoshotBytesPerBlock = std::size_t(64) << 10;
// One-shot handles up to 512 KiB per rank; best uses it for all-reduce up to there: 4.8-5.8 us
// eager against 10.5-11.9 for nccl at every power of two from 8 B to 64 KiB, 2.8-4.1 against
// 5.9-7.3 with CUDA graphs (h200x2-20261130-sweep-cc01c2c).
constexpr std::size_t kDefaultOneshotMaxBytes = std::size_t(512) << 10;
// One-shot: one block per 8 KiB, at most 32 (LL lines are latency-bound, not bandwidth-bound).
constexpr std::size_t kOneshotBytesPerBlock = std::size_t(8) << 10;
constexpr int kOneshotMaxBlocks = 32;
// oneshot's reduce (the root reads every input): one block per 64 KiB of input, at most 128, as
// two-shot's reading half (whose numbers are above); not tuned for reduce (its batch times with
// these blocks: h200x2-20261130-r6).
constexpr std::size_t kDirectReduceBytesPerBlock = kTwoshotBytesPerBlock;
constexpr int kDirectReduceMaxBlocks = kDefaultTwoshotBlocks;
// Bruck all-gather: one block per 64 KiB of a piece, at most 32.
constexpr std::size_t kBruckBytesPerBlock = std::size_t(64) << 10;
constexpr int kBruckMaxBlocks = 32;
// best's all-reduce: two-shot up to 64 MiB, ring above. Two-shot leads up to 64 MiB (291 against
// 274 GB/s at 16 MiB, 326 against 325 at 64 MiB), the two meet at 128-256 MiB, and the ring leads
// from 512 MiB (352 against 343; 366 against 345 at 4 GiB) (h200x2-20261130-sweep-cc01c2c).
constexpr std::size_t kDefaultBestTwoshotMax = std::size_t(64) << 20;
// best's all-gather, by a rank's piece: Bruck up to 2 MiB, ring up to 16 MiB, copy engines
// above. On 2 ranks (output = 2 pieces; h200x2-20261130-sweep-cc01c2c): Bruck 139 against ring 132
// GB/s at 4 MiB output, ring 192 against Bruck 189 at 8 MiB and 241 against Bruck 228 and ce 197
// at 16 MiB, ring 272 against ce 254 at 32 MiB, ce 299 against ring 291 at 64 MiB.
constexpr std::size_t kDefaultBestBruckMax = std::size_t(2) << 20;
constexpr std::size_t kDefaultBestRingAllgatherMax = std::size_t(16) << 20;

// Ring channels over the host transport: 32. With the SMs moving both halves, 16 / 32 / 64
// channels gave 33.0 / 34.2 / 30.8 GB/s at 256 MiB (h200x2-20261130-r3; 32 channels:
// h200x2-20261130-r1); 32 keeps 32 x 4 slots x 1 MiB = 128 MiB of pinned FIFO per rank.
constexpr int kDefaultHostChannels = 32;
// Who moves each half of a host connection, the SMs or the copy engines through a CPU proxy:
// CCBENCH_GPU_HOST_RECV and CCBENCH_GPU_HOST_SEND force one for every size; unset, the ring takes
// the SMs below CCBENCH_GPU_HOST_CE_MIN_BYTES and the copy engines for both halves from there
// (transports/gpu/host_copy.h, from the four combinations measured in h200x2-20261130-r8).

// Over net: 8 ring channels = 8 TCP streams per peer and direction (TCP over loopback on the
// 2 x H200 machine: 21.3 GB/s with 4 streams, 34.2 with 8, h200x2-20261130-ceilings), and 512 KiB
// slots (only a step's bytes travel; a connection has kFifoSlots slots in flight, 2 MiB). Chosen by a
// sweep of slots {256K, 512K, 1M} x channels {4, 8, 16} x proxy threads {4, 8} between two
// emulated nodes on 2 x H200: 512K x 8 x 8 threads was best, 16.7 / 17.1 GB/s ring all-reduce busbw
// at 16 / 128 MiB (one launch each, so +-20 % noise; every setting in h200x2-20261130-r6).
constexpr int kDefaultNetChannels = 8;
// The tree all-reduce over net: a quarter of the net channels per tree (each tree channel has up to
// six FIFOs), so each direction between two ranks carries 2 trees x this many tcp streams.
constexpr int net_tree_channels_of(int net_channels) { return net_channels / 4 > 1 ? net_channels / 4 : 1; }
constexpr std::size_t kNetSlotBytes = std::size_t(512) << 10;

// The tcp streams of a GPU ring over the net transport: one connection per ring channel and
// direction (CCBENCH_GPU_NET_CHANNELS), its FIFO slots (CCBENCH_GPU_NET_SLOT_BYTES) and slots in
// flight. What `ccbench links` and --measure-ceilings measure as net/tcp, and the model predicts.
struct NetStreams {
  int count = 1;
  int tree_count = 1;  // the tree all-reduce's streams per direction: 2 trees x its net channels
  std::size_t slot_bytes = 256 * 1024;
  int depth = 4;
};
NetStreams net_streams();

std::size_t slot_bytes();               // CCBENCH_GPU_SLOT_BYTES
int net_channels();                     // CCBENCH_GPU_NET_CHANNELS
std::size_t net_slot_bytes();           // CCBENCH_GPU_NET_SLOT_BYTES, at most slot_bytes()
int host_channels();                    // CCBENCH_GPU_HOST_CHANNELS
int ring_channels();                    // CCBENCH_GPU_CHANNELS
int tree_channels();                    // CCBENCH_GPU_TREE_CHANNELS
int twoshot_blocks();                   // CCBENCH_GPU_TWOSHOT_BLOCKS
std::size_t oneshot_max_bytes();        // CCBENCH_ONESHOT_MAX_BYTES
std::size_t best_oneshot_max();         // CCBENCH_BEST_ONESHOT_MAX_BYTES (at most oneshot_max_bytes)
std::size_t best_twoshot_max();         // CCBENCH_BEST_TWOSHOT_MAX_BYTES
std::size_t best_bruck_max();           // CCBENCH_BEST_BRUCK_MAX_BYTES
std::size_t best_ring_allgather_max();  // CCBENCH_BEST_RING_ALLGATHER_MAX_BYTES

}  // namespace ccbench::gpu
