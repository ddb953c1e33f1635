#pragma once
// The GPU kernels' tuning knobs: the readers of their CCBENCH_* variables (names, ranges, defaults
// and the measurements that chose them: core/knob_table.h) and the kernels' other tuned numbers
// with theirs. Each reader validates its variable and throws Error(usage) naming a bad value. The
// measurements are evidence entries (docs/evidence/INDEX.md), all on 2 x H200 (NV18), busbw of
// float sum out of place.
#include <cstddef>

#include "core/knob_table.h"

namespace ccbench::gpu {

// Small ring messages use fewer channels, one per 128 KiB, so that slots are fuller.
constexpr std::size_t kRingBytesPerChannel = std::size_t(128) << 10;
// A two-shot block handles at least 64 KiB of its rank's chunk.
constexpr std::size_t kTwoshotBytesPerBlock = std::size_t(64) << 10;
// One-shot: one block per 8 KiB, at most 32 (LL lines are latency-bound, not bandwidth-bound).
constexpr std::size_t kOneshotBytesPerBlock = std::size_t(8) << 10;
constexpr int kOneshotMaxBlocks = 32;
// oneshot's reduce (the root reads every input): one block per 64 KiB of input, at most
// CCBENCH_GPU_TWOSHOT_BLOCKS' default, as two-shot's reading half; not tuned for reduce (its batch
// times with these blocks: h200x2-20261130-r6).
constexpr std::size_t kDirectReduceBytesPerBlock = kTwoshotBytesPerBlock;
constexpr int kDirectReduceMaxBlocks = knob_default<int>(Knob::gpu_twoshot_blocks);
// Bruck all-gather: one block per 64 KiB of a piece, at most 32.
constexpr std::size_t kBruckBytesPerBlock = std::size_t(64) << 10;
constexpr int kBruckMaxBlocks = 32;

// Who moves each half of a host connection, the SMs or the copy engines through a CPU proxy:
// CCBENCH_GPU_HOST_RECV and CCBENCH_GPU_HOST_SEND force one for every size; unset, the ring takes
// the SMs below CCBENCH_GPU_HOST_CE_MIN_BYTES and the copy engines for both halves from there
// (transports/gpu/host_copy.h, from the four combinations measured in h200x2-20261130-r8).

// The tree all-reduce over net: a quarter of the net channels per tree (each tree channel has up to
// six FIFOs), so each direction between two ranks carries 2 trees x this many tcp streams.
constexpr int net_tree_channels_of(int net_channels) { return net_channels / 4 > 1 ? net_channels / 4 : 1; }

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
std::size_t net_slot_bytes();           // CCBENCH_GPU_NET_SLOT_BYTES, at most slot_bytes() (set above it: Error(usage))
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
