// The tree kernels for aligned buffers, and the choice of variant at launch.
#include "collectives/gpu/fifo_tree.cuh"

namespace ccbench::gpu {

int fifo::launch_tree_aligned(const TreeParams& p, cudaStream_t s) { return launch_tree_variant<false>(p, s); }

int launch_tree(const TreeParams& p, void* stream) {
  // The tree's slices start on whole packs from the buffers' starts: only the buffers can be off.
  const bool shift = fifo::misaligned(p.send) || fifo::misaligned(p.recv);
  const auto s = static_cast<cudaStream_t>(stream);
  return shift ? fifo::launch_tree_shifted(p, s) : fifo::launch_tree_aligned(p, s);
}

}  // namespace ccbench::gpu
