// The ring kernels for misaligned buffers (reduce_copy's kShift), launched by fifo_ring.cu.
#include "collectives/gpu/fifo_ring.cuh"

namespace ccbench::gpu {

int fifo::launch_ring_shifted(const RingParams& p, cudaStream_t s) { return launch_ring_variant<true>(p, s); }

}  // namespace ccbench::gpu
