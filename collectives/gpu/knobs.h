#pragma once
// The GPU kernels' tuning knobs: every tuned number as a named default with the measurement
// that chose it, and the environment variable that overrides it. Each reader validates its
// variable and throws Error(usage) naming a bad value.
#include <cstddef>

namespace ccbench::gpu {

// 1 MiB FIFO slots: measured on 2 x H200 (NV18), 1-4 GiB all-reduce, against 256 and 512 KiB.
constexpr std::size_t kDefaultSlotBytes = std::size_t(1) << 20;
// 128 ring channels (capped by the resident limit): 366 GB/s busbw at 4 GiB on 2 x H200 against
// 347 with 64 and 326 with 32 (1 MiB slots; results/baselines/h200x2-2026-11-30).
constexpr int kDefaultRingChannels = 128;
// Small ring messages use fewer channels, one per 128 KiB, so that slots are fuller.
constexpr std::size_t kRingBytesPerChannel = std::size_t(128) << 10;
// 32 tree channels per tree and role (128 blocks): 340 GB/s at 256 MiB on 2 x H200 against 303
// with 16 (results/baselines/h200x2-2026-11-30).
constexpr int kDefaultTreeChannels = 32;
constexpr int kMaxTreeChannels = 32;
// 128 two-shot blocks: 340 GB/s at 256 MiB on 2 x H200 against 330 with 64 and 307 with 32;
// more reads of the peer's input in flight.
constexpr int kDefaultTwoshotBlocks = 128;
// A two-shot block handles at least 64 KiB of its rank's chunk.
constexpr std::size_t kTwoshotBytesPerBlock = std::size_t(64) << 10;
// One-shot handles up to 512 KiB per rank; best uses it for all-reduce up to there: 4.0-5.1 us
// eager against 6.6-8.0 for nccl at 8 B-64 KiB on 2 x H200
// (results/baselines/h200x2-2026-11-30/README.md, "All-reduce latency").
constexpr std::size_t kDefaultOneshotMaxBytes = std::size_t(512) << 10;
// One-shot: one block per 8 KiB, at most 32 (LL lines are latency-bound, not bandwidth-bound).
constexpr std::size_t kOneshotBytesPerBlock = std::size_t(8) << 10;
constexpr int kOneshotMaxBlocks = 32;
// oneshot's reduce (the root reads every input): one block per 64 KiB of input, at most 128, as
// two-shot's reading half (whose numbers are above). Not measured for reduce yet.
constexpr std::size_t kDirectReduceBytesPerBlock = kTwoshotBytesPerBlock;
constexpr int kDirectReduceMaxBlocks = kDefaultTwoshotBlocks;
// Bruck all-gather: one block per 64 KiB of a piece, at most 32.
constexpr std::size_t kBruckBytesPerBlock = std::size_t(64) << 10;
constexpr int kBruckMaxBlocks = 32;
// best's all-reduce: two-shot up to 64 MiB, ring above. On 2 x H200 two-shot plateaus near
// 300 GB/s while ring reaches 321 at 128 MiB and 340 at 256 MiB
// (results/baselines/h200x2-2026-11-30/README.md, "All-reduce bandwidth").
constexpr std::size_t kDefaultBestTwoshotMax = std::size_t(64) << 20;
// best's all-gather, by a rank's piece: Bruck up to 2 MiB, ring up to 16 MiB, copy engines
// above. On 2 x H200 (results/baselines/h200x2-2026-11-30, 128 ring channels): Bruck 138 against
// ring 133 GB/s at 4 MiB output, ring 240 against Bruck 228 and ce 198 at 16 MiB, ring 273
// against ce 252 at 32 MiB, ce 301 against ring 289 at 64 MiB.
constexpr std::size_t kDefaultBestBruckMax = std::size_t(2) << 20;
constexpr std::size_t kDefaultBestRingAllgatherMax = std::size_t(16) << 20;

// Ring channels over the host transport. Not tuned yet (no GPU run of the host path so far):
// 32 keeps 32 x 4 slots x 1 MiB = 128 MiB of pinned FIFO per rank, and 32 blocks x 512 threads
// x 4 loads of 16 B = 1 MiB of host reads in flight, well past what PCIe's latency needs.
constexpr int kDefaultHostChannels = 32;
// Who moves each half of a host connection, the SMs or the copy engines through a CPU proxy:
// CCBENCH_GPU_HOST_RECV and CCBENCH_GPU_HOST_SEND (transports/host_copy.h), both `sm` by default
// until the GPU run has measured the four combinations.

// Over net: 8 ring channels = 8 TCP streams per peer and direction (TCP over loopback on the
// 2 x H200 machine: 21.3 GB/s with 4 streams, 34.2 with 8, ../shared ANCHORS), and 512 KiB slots
// (only a step's bytes travel; a connection has kFifoSlots slots in flight, 2 MiB). Chosen by a
// sweep of slots {256K, 512K, 1M} x channels {4, 8, 16} x proxy threads {4, 8} between two
// emulated nodes on 2 x H200 (ring all-reduce busbw at 16 / 128 MiB): 512K x 8 x 8 threads 16.7 /
// 17.1 GB/s, 256K x 8 x 8 14.5 / 14.7, 1M x 8 x 8 14.9 / 14.2, 16 channels no better (14.6 /
// 16.7), 4 threads 5.8-11 everywhere (results/baselines/h200x2-2026-11-30/transports, r6).
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

std::size_t slot_bytes();          // CCBENCH_GPU_SLOT_BYTES
int net_channels();                // CCBENCH_GPU_NET_CHANNELS
std::size_t net_slot_bytes();      // CCBENCH_GPU_NET_SLOT_BYTES, at most slot_bytes()
int host_channels();               // CCBENCH_GPU_HOST_CHANNELS
int ring_channels();               // CCBENCH_GPU_CHANNELS
int tree_channels();               // CCBENCH_GPU_TREE_CHANNELS
int twoshot_blocks();              // CCBENCH_GPU_TWOSHOT_BLOCKS
std::size_t oneshot_max_bytes();   // CCBENCH_ONESHOT_MAX_BYTES
std::size_t best_oneshot_max();    // CCBENCH_BEST_ONESHOT_MAX_BYTES (at most oneshot_max_bytes)
std::size_t best_twoshot_max();    // CCBENCH_BEST_TWOSHOT_MAX_BYTES
std::size_t best_bruck_max();      // CCBENCH_BEST_BRUCK_MAX_BYTES
std::size_t best_ring_allgather_max();  // CCBENCH_BEST_RING_ALLGATHER_MAX_BYTES

}  // namespace ccbench::gpu
