#pragma once
// Launchers of the --overlap kernels (overlap_kernels.cu); each returns the cudaError_t of the launch.
#include <cstddef>
#include <cstdint>

namespace ccbench::overlap {

// Threads of a copy block: the most a block may have, so that one block fills an SM's share of
// the copy and `blocks` blocks take `blocks` SMs (the block scheduler places a grid no larger
// than the GPU one block per SM), leaving the others free.
inline constexpr int kCopyThreads = 1024;

// dst = src, `bytes` a multiple of 16, on `blocks` blocks of kCopyThreads.
int launch_copy(const void* src, void* dst, std::size_t bytes, int blocks, void* stream);
// `elements` bf16 values in [-1, 1), different for each `salt`.
int fill_bf16(void* p, std::size_t elements, std::uint32_t salt, void* stream);

}  // namespace ccbench::overlap
