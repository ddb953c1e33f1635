#include "collectives/gpu/knobs.h"

#include <algorithm>

#include "collectives/gpu/gpu_impls.h"
#include "collectives/gpu/kernel_args.h"
#include "core/knobs.h"
#include "transports/gpu/gpu_net.h"
#include "transports/gpu/host_copy.h"

namespace ccbench::gpu {

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kMaxGpuSlotBytes = std::size_t(16) << 20;
constexpr std::size_t kNoLimit = std::size_t(1) << 40;

// Through core's knob reader: a bad value is Error(usage) naming the variable and what is valid.
std::size_t knob_bytes(const char* name, std::size_t fallback, std::size_t lo, std::size_t hi, std::size_t multiple) {
  return static_cast<std::size_t>(env_size(name, fallback, KnobRange{lo, hi, multiple}));
}
int env_count(const char* name, int fallback, int hi) { return static_cast<int>(env_int(name, fallback, 1, hi)); }

}  // namespace

std::size_t slot_bytes() {
  return knob_bytes("CCBENCH_GPU_SLOT_BYTES", kDefaultSlotBytes, kPage, kMaxGpuSlotBytes, kPage);
}
int ring_channels() { return env_count("CCBENCH_GPU_CHANNELS", kDefaultRingChannels, kMaxChannels); }
int host_channels() { return env_count("CCBENCH_GPU_HOST_CHANNELS", kDefaultHostChannels, kMaxChannels); }
int net_channels() { return env_count("CCBENCH_GPU_NET_CHANNELS", kDefaultNetChannels, kMaxChannels); }
std::size_t net_slot_bytes() {
  return std::min(slot_bytes(),
                  knob_bytes("CCBENCH_GPU_NET_SLOT_BYTES", kNetSlotBytes, kPage, kMaxGpuSlotBytes, kPage));
}
int tree_channels() { return env_count("CCBENCH_GPU_TREE_CHANNELS", kDefaultTreeChannels, kMaxTreeChannels); }
int twoshot_blocks() { return env_count("CCBENCH_GPU_TWOSHOT_BLOCKS", kDefaultTwoshotBlocks, kMaxChannels); }
std::size_t oneshot_max_bytes() {
  return knob_bytes("CCBENCH_ONESHOT_MAX_BYTES", kDefaultOneshotMaxBytes, 8, std::size_t(8) << 20, 8);
}
std::size_t best_oneshot_max() {
  return knob_bytes("CCBENCH_BEST_ONESHOT_MAX_BYTES", oneshot_max_bytes(), 0, oneshot_max_bytes(), 1);
}
std::size_t best_twoshot_max() {
  return knob_bytes("CCBENCH_BEST_TWOSHOT_MAX_BYTES", kDefaultBestTwoshotMax, 0, kNoLimit, 1);
}
std::size_t best_bruck_max() {
  return knob_bytes("CCBENCH_BEST_BRUCK_MAX_BYTES", kDefaultBestBruckMax, 0, kNoLimit, 1);
}
std::size_t best_ring_allgather_max() {
  return knob_bytes("CCBENCH_BEST_RING_ALLGATHER_MAX_BYTES", kDefaultBestRingAllgatherMax, 0, kNoLimit, 1);
}

NetStreams net_streams() {
  const int ring = net_channels();
  return {ring, 2 * net_tree_channels_of(ring), net_slot_bytes(), kFifoSlots};
}

}  // namespace ccbench::gpu

namespace ccbench {

void check_gpu_tuning_environment() {
  gpu::slot_bytes();
  gpu::ring_channels();
  gpu::host_channels();
  gpu::net_channels();
  gpu::net_slot_bytes();
  net_proxy_threads();
  host_copy_modes();
  host_ce_min_bytes();
  gpu::tree_channels();
  gpu::twoshot_blocks();
  gpu::best_oneshot_max();  // reads CCBENCH_ONESHOT_MAX_BYTES too
  gpu::best_twoshot_max();
  gpu::best_bruck_max();
  gpu::best_ring_allgather_max();
}

}  // namespace ccbench
