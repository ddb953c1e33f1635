// The tree kernels for misaligned buffers (reduce_copy's kShift), launched by fifo_tree.cu.
#include "collectives/gpu/fifo_tree.cuh"

namespace ccbench::gpu {

int fifo::launch_tree_shifted(const TreeParams& p, cudaStream_t s) { return launch_tree_variant<true>(p, s); }

}  // namespace ccbench::gpu
