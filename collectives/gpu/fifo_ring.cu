// The ring kernels for aligned buffers, and the choice of variant at launch.
#include "collectives/gpu/fifo_ring.cuh"

namespace ccbench::gpu {

int fifo::launch_ring_aligned(const RingParams& p, cudaStream_t s) { return launch_ring_variant<false>(p, s); }

int launch_ring(const RingParams& p, void* stream) {
  // All-gather and reduce-scatter blocks start at rank * count: misaligned unless count's bytes are
  // whole packs.
  const bool blocks = p.kind == RingKind::allgather || p.kind == RingKind::reducescatter;
  const std::size_t bytes = p.count * dispatch_type(p.dtype, [](auto v) { return sizeof(v); });
  const bool shift = fifo::misaligned(p.send) || fifo::misaligned(p.recv) || (blocks && bytes % kPackBytes != 0);
  const auto s = static_cast<cudaStream_t>(stream);
  return shift ? fifo::launch_ring_shifted(p, s) : fifo::launch_ring_aligned(p, s);
}

}  // namespace ccbench::gpu
