#pragma once
// Launchers of the --overlap kernels (overlap_kernels.cu); each returns the cudaError_t of the launch.
#include <cstddef>
#include <cstdint>

namespace ccbench::overlap {

// dst = src, `bytes` a multiple of 16, on `blocks` blocks (a few per SM fills the GPU).
int launch_copy(const void* src, void* dst, std::size_t bytes, int blocks, void* stream);
// `elements` bf16 values in [-1, 1), different for each `salt`.
int fill_bf16(void* p, std::size_t elements, std::uint32_t salt, void* stream);

}  // namespace ccbench::overlap
