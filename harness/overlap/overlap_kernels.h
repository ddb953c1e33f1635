#pragma once
// Launchers of the --overlap kernels (overlap_kernels.cu); each returns the cudaError_t of the launch.
#include <cstddef>
#include <cstdint>

namespace ccbench::overlap {

// Threads of a copy block: the most a block may have. Each block also reserves the most shared
// memory a block may (copy_block_smem), so no second block fits beside it on an SM: a grid of
// `blocks` blocks then takes exactly `blocks` SMs and leaves the others free, whatever order the
// block scheduler fills them in.
inline constexpr int kCopyThreads = 1024;

// The dynamic shared memory a copy block reserves on the current device (its opt-in maximum per
// block), allowed for the kernel there; returns the cudaError_t of the set-up.
int copy_block_smem(std::size_t* bytes);
// dst = src, `bytes` a multiple of 16, on `blocks` blocks of kCopyThreads, each reserving `smem`.
int launch_copy(const void* src, void* dst, std::size_t bytes, int blocks, std::size_t smem, void* stream);
// `elements` bf16 values in [-1, 1), different for each `salt`.
int fill_bf16(void* p, std::size_t elements, std::uint32_t salt, void* stream);

}  // namespace ccbench::overlap
