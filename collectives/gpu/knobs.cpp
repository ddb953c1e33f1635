#include "collectives/gpu/knobs.h"

#include <algorithm>

#include "collectives/gpu/gpu_impls.h"
#include "collectives/gpu/kernel_args.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/size.h"
#include "transports/gpu/gpu_net.h"
#include "transports/gpu/host_copy.h"

namespace ccbench::gpu {

// The kernels' limits the table's ranges must keep.
static_assert(knob_row(Knob::gpu_channels).hi == kMaxChannels && knob_row(Knob::gpu_host_channels).hi == kMaxChannels &&
                  knob_row(Knob::gpu_net_channels).hi == kMaxChannels &&
                  knob_row(Knob::gpu_twoshot_blocks).hi == kMaxChannels,
              "core/knob_table.h: the ring and two-shot blocks are at most kMaxChannels");

namespace {

int env_count(Knob k) { return static_cast<int>(env_int(k)); }
std::size_t env_bytes(Knob k) { return static_cast<std::size_t>(env_size(k)); }

}  // namespace

std::size_t slot_bytes() { return env_bytes(Knob::gpu_slot_bytes); }
int ring_channels() { return env_count(Knob::gpu_channels); }
int host_channels() { return env_count(Knob::gpu_host_channels); }
int net_channels() { return env_count(Knob::gpu_net_channels); }
// The net FIFO's slots lie in the kernels' FIFO slots. The default (512K) is cut to a smaller
// CCBENCH_GPU_SLOT_BYTES, as the table says; a value the user set that cannot be had is refused.
std::size_t net_slot_bytes() {
  const std::size_t net = env_bytes(Knob::gpu_net_slot_bytes), fifo = slot_bytes();
  if (net > fifo && env_text(Knob::gpu_net_slot_bytes))
    fail(ExitCode::usage,
         "CCBENCH_GPU_NET_SLOT_BYTES='{}' is larger than CCBENCH_GPU_SLOT_BYTES ({}): a net slot lies in a slot of "
         "the GPU kernels' FIFO; give at most {}, or raise CCBENCH_GPU_SLOT_BYTES",
         *env_text(Knob::gpu_net_slot_bytes), format_size(fifo), format_size(fifo));
  return std::min(net, fifo);
}
int tree_channels() { return env_count(Knob::gpu_tree_channels); }
int twoshot_blocks() { return env_count(Knob::gpu_twoshot_blocks); }
std::size_t oneshot_max_bytes() { return env_bytes(Knob::oneshot_max_bytes); }
std::size_t best_oneshot_max() { return env_bytes(Knob::best_oneshot_max_bytes); }
std::size_t best_twoshot_max() { return env_bytes(Knob::best_twoshot_max_bytes); }
std::size_t best_bruck_max() { return env_bytes(Knob::best_bruck_max_bytes); }
std::size_t best_ring_allgather_max() { return env_bytes(Knob::best_ring_allgather_max_bytes); }

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
